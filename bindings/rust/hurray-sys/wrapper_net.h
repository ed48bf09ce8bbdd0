/* The network library's header, bound behind the `net` feature. */
#include "hurray_net.h"
