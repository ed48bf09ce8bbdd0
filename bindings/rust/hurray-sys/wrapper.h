/* The headers hurray-sys binds (scripts/rust-bindings.sh). hurray_backend.h
 * gives the structs hurray_device_info() and friends fill. */
#include "hurray.h"
#include "hurray_backend.h"
#include "hurray_ipc.h"
#include "hurray_dlpack.h"
