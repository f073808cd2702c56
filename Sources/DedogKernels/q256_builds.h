// Includes the file QIMPL_256 names once per 256-bit byte dot product build (qdot4.h): AVX-VNNI's `vpdpbusd`
// (prefix vnni256_), AVX2's `vpmaddubsw` where its pair sums fit (ubs256_), AVX2 on inputs made signed, for weights
// within ±127 (sgn256_, reading the biases its layouts keep for it: XSIGNED), and AVX2 with each input byte split in
// two (ubs8_, any bytes), with KTARGET, KFN, DOT4 and XSIGNED set for each as the impl headers expect; then undefines
// QIMPL_256 and XSIGNED. Not part of the public API; included by qkernels.c and qstem.c on x86-64.
#define XSIGNED 0
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
#undef XSIGNED
#define XSIGNED 1
#define KTARGET __attribute__((target("avx2,fma")))
#define KFN(name) sgn256_##name
#define DOT4 DEDOG_DOT4_SGN
#include QIMPL_256
#undef XSIGNED
#undef QIMPL_256
