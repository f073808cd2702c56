#ifndef DEDOG_SIDECAR_SUPPORT_H
#define DEDOG_SIDECAR_SUPPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/// Exempi writes the message of every error it meets (a sidecar that is not XML, say) to std::cerr, and a
/// library must not print: between begin and end std::cerr writes nowhere. The pair also serialises the exempi
/// calls it brackets (exempi's set-up and its namespace table are process-wide).
void dedog_xmp_quiet_begin(void);
void dedog_xmp_quiet_end(void);

/// syncfs(2): flushes the file system that holds the open file `fd` (Glibc declares it only under _GNU_SOURCE,
/// which Swift's Glibc module does not set).
int dedog_syncfs(int fd);

#ifdef __cplusplus
}
#endif

#endif
