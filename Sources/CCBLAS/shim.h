// CBLAS as provided by OpenBLAS (Debian: libopenblas-dev).
#include <cblas.h>
// OpenBLAS extensions used to set the thread count explicitly.
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
