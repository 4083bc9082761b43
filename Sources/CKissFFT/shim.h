#include <kiss_fftndr.h>
