#include <kissfft/kiss_fftndr.h>
