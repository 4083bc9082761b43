#include <libavdevice/avdevice.h>
