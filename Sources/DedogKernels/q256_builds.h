// Includes the file QIMPL_256 names once per 256-bit byte dot product build (qdot4.h): AVX-VNNI's `vpdpbusd`
// (prefix vnni256_), AVX2's `vpmaddubsw` where its pair sums fit (ubs256_), and AVX2 with each input byte split in two
// (ubs8_), with KTARGET, KFN and DOT4 set for each as the impl headers expect; then undefines QIMPL_256. Not part of
// the public API; included by qkernels.c and qstem.c on x86-64.
#define KTARGET __attribute__((target("avx2,fma,avxvnni")))
#define KFN(name) vnni256_##name
#define DOT4 DEDOG_DOT4_VNNI
#include QIMPL_256
#define KTARGET __attribute__((target("avx2,fma")))
#define KFN(name) ubs256_##name
#define DOT4 DEDOG_DOT4_UBS
#include QIMPL_256
#define KTARGET __attribute__((target("avx2,fma")))
#define KFN(name) ubs8_##name
#define DOT4 DEDOG_DOT4_UBS8
#include QIMPL_256
#undef QIMPL_256
