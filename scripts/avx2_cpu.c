// A CPU without AVX-512 and AVX-VNNI, for benchmarks on a CPU that has them (issue 69): preloaded into a process
// (scripts/as-avx2-cpu), it turns on the kernel's CPUID faulting (arch_prctl ARCH_SET_CPUID, where /proc/cpuinfo says
// cpuid_fault), and answers each CPUID the process runs with the CPU's own answer minus the AVX-512, AVX-VNNI and
// AMX bits, so that dedog and its peers (ONNX Runtime's MLAS, OpenVINO) choose their AVX2 code as on an AVX2-only CPU
// and can be timed side by side. Benchmarking only: not part of dedog, never linked into it.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define ARCH_GET_CPUID 0x1011
#define ARCH_SET_CPUID 0x1012

static void cpuid_real(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static void masked(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
    cpuid_real(leaf, sub, r);
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
    if (leaf == 7 && sub == 0) {
        // EBX: AVX512F 16, DQ 17, IFMA 21, PF 26, ER 27, CD 28, BW 30, VL 31.
        r[1] &= ~((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31));
        // ECX: VBMI 1, VBMI2 6, VNNI 11, BITALG 12, VPOPCNTDQ 14.
        r[2] &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
        // EDX: 4VNNIW 2, 4FMAPS 3, VP2INTERSECT 8, AMX-BF16 22, AVX512-FP16 23, AMX-TILE 24, AMX-INT8 25.
        r[3] &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25));
    } else if (leaf == 7 && sub == 1) {
        // EAX: AVX-VNNI 4, AVX512-BF16 5, AVX-IFMA 23; EDX: AVX-VNNI-INT8 4, AVX10 19.
        r[0] &= ~((1u << 4) | (1u << 5) | (1u << 23));
        r[3] &= ~((1u << 4) | (1u << 19));
    }
}

static void on_segv(int sig, siginfo_t *info, void *context) {
    ucontext_t *uc = context;
    greg_t *g = uc->uc_mcontext.gregs;
    const uint8_t *ip = (const uint8_t *)g[REG_RIP];
    if (ip[0] == 0x0F && ip[1] == 0xA2) {
        uint32_t r[4];
        masked((uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX], r);
        g[REG_RAX] = r[0];
        g[REG_RBX] = r[1];
        g[REG_RCX] = r[2];
        g[REG_RDX] = r[3];
        g[REG_RIP] += 2;
        return;
    }
    (void)info;
    signal(sig, SIG_DFL);  // a real fault: let it end the process as it would have
}

__attribute__((constructor)) static void start(void) {
    // Chromium (the page tests' browser) sandboxes its processes and handles SIGSEGV itself: left as it is.
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        const char *name = strrchr(exe, '/');
        if (strstr(name ? name : exe, "chrom")) return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
        fprintf(stderr, "as-avx2-cpu: this CPU or kernel cannot fault on CPUID (no cpuid_fault in /proc/cpuinfo)\n");
        _exit(3);
    }
}
