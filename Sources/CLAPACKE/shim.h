// LAPACKE, the C interface to LAPACK (Debian: liblapacke-dev).
#include <lapacke.h>
