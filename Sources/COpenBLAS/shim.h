#include <cblas.h>

/* LAPACK's Cholesky routines, exported by libopenblas (Fortran symbols; no LAPACK header is installed).
   Column-major; uplo 'L' or 'U'; info 0 on success. */
void dpotrf_(const char *uplo, const blasint *n, double *a, const blasint *lda, blasint *info);
void dpotri_(const char *uplo, const blasint *n, double *a, const blasint *lda, blasint *info);
