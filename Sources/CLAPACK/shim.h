#include <lapack.h>
