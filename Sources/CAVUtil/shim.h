#include <libavutil/display.h>
