"""Loading libhurray.so.1 and declaring its C API (hurray.h, hurray_dlpack.h)
for ctypes. Internal: use the names exported by the hurray package."""
import ctypes
import ctypes.util
import glob
import os

SONAME = "libhurray.so.1"


def _sanitized(build_dir):
    """True for a build tree configured with HURRAY_SANITIZE: its libhurray
    needs the sanitizer runtime loaded first, and would abort this process."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("HURRAY_SANITIZE:"):
                    return line.split("=", 1)[1].strip() != ""
    except OSError:
        pass
    return False


def _candidates():
    """Where to look for libhurray.so.1, in order."""
    env = os.environ.get("HURRAY_LIBRARY")
    if env:
        yield env
        return  # an explicit choice is never second-guessed
    here = os.path.dirname(os.path.abspath(__file__))
    # A source checkout: python/hurray/ -> the repository's build trees.
    repo = os.path.dirname(os.path.dirname(here))
    builds = glob.glob(os.path.join(repo, "build*", SONAME))
    builds += glob.glob(os.path.join(repo, "build*", "*", SONAME))
    for path in sorted(builds, key=os.path.getmtime, reverse=True):  # newest first
        if not _sanitized(os.path.dirname(path)):
            yield path
    # Installed: <prefix>/lib[/<multiarch>]/python3*/{site,dist}-packages/hurray
    # -> <prefix>/lib[/<multiarch>]/libhurray.so.1.
    d = here
    for _ in range(5):
        d = os.path.dirname(d)
        if os.path.basename(d) == "lib" or os.path.basename(os.path.dirname(d)) == "lib":
            yield os.path.join(d, SONAME)
    import sysconfig
    arch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    for prefix in ("/usr/local/lib", "/usr/local/lib/" + arch, "/usr/lib", "/usr/lib/" + arch):
        yield os.path.join(prefix, SONAME)
    found = ctypes.util.find_library("hurray")
    if found:
        yield found
    yield SONAME  # LD_LIBRARY_PATH and the loader's cache
    libdir = _pkg_config_libdir()  # another prefix, named by PKG_CONFIG_PATH
    if libdir:
        yield os.path.join(libdir, SONAME)


def _pkg_config_libdir():
    """libdir of hurray.pc (pkg-config), or None."""
    import shutil
    import subprocess
    tool = shutil.which("pkg-config") or shutil.which("pkgconf")
    if tool is None:
        return None
    try:
        out = subprocess.run([tool, "--variable=libdir", "hurray"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            continue
        if not hasattr(lib, "hurray_dlpack_import_legacy"):  # an older libhurray
            errors.append("%s: no DLPack bridge (libhurray older than this package)" % path)
            continue
        return lib, path
    raise OSError("hurray: cannot load %s (set HURRAY_LIBRARY to its path); tried: %s"
                  % (SONAME, "; ".join(errors) or "nothing found"))


lib, path = load()

c_u8, c_u16, c_u32, c_u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
c_i32, c_i64, c_vp = ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p


class Error(ctypes.Structure):
    _fields_ = [("status", c_i32), ("rule", c_u32), ("severity", c_i32), ("reserved0", c_i32),
                ("buffer_index", c_i64), ("byte_offset", c_i64),
                ("rule_id", ctypes.c_char * 32), ("message", ctypes.c_char * 256)]


class BufferHandle(ctypes.Structure):
    _fields_ = [("byte_size", c_u64), ("alignment", c_u32), ("device_tag", c_u8),
                ("sync_mode", c_u8), ("memory_class", c_u8), ("reserved", c_u8)]


class Handoff(ctypes.Structure):
    pass


HANDOFF_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(Handoff))
Handoff._fields_ = [("version", c_u32), ("flags", c_u32), ("handle", c_u8 * 16),
                    ("device_ordinal", c_i32), ("reserved0", c_u32), ("data", c_vp),
                    ("sync_object", c_vp), ("sync_value", c_u64),
                    ("release_event", c_vp), ("release", c_vp),
                    ("private_data", c_vp), ("reserved", c_u64 * 4)]

FREE_FN = ctypes.CFUNCTYPE(None, c_vp, c_vp)


class BufferDesc(ctypes.Structure):
    _fields_ = [("size", c_u32), ("flags", c_u32), ("handle", BufferHandle), ("data", c_vp),
                ("device_ordinal", c_i32), ("reserved0", c_u32), ("free_fn", FREE_FN),
                ("free_user", c_vp)]


class ExportDesc(ctypes.Structure):
    _fields_ = [("size", c_u32), ("flags", c_u32), ("sync_mode", c_u32), ("reserved0", c_u32),
                ("sync_object", c_vp), ("sync_value", c_u64), ("event_free_fn", c_vp),
                ("event_user", c_vp)]


class AllocDesc(ctypes.Structure):
    _fields_ = [("size", c_u32), ("flags", c_u32), ("byte_size", c_u64), ("alignment", c_u32),
                ("device_tag", c_u8), ("memory_class", c_u8), ("reserved0", c_u8 * 2),
                ("device_ordinal", c_i32), ("reserved1", c_u32)]


# ---- hurray_dlpack.h ----
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_i32), ("device_id", c_i32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", c_u8), ("bits", c_u8), ("lanes", c_u16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", c_vp), ("device", DLDevice), ("ndim", c_i32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(c_i64)), ("strides", ctypes.POINTER(c_i64)),
                ("byte_offset", c_u64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_vp),
                            ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_u32), ("minor", c_u32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion), ("manager_ctx", c_vp),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", c_u64), ("dl_tensor", DLTensor)]

for _t, _n in ((Error, 320), (BufferHandle, 16), (Handoff, 112), (DLTensor, 48),
               (DLManagedTensor, 64), (DLManagedTensorVersioned, 80)):
    assert ctypes.sizeof(_t) == _n, (_t.__name__, ctypes.sizeof(_t))

_P = ctypes.POINTER
status = c_i32
_decls = {
    "hurray_version": (ctypes.c_uint, []),
    "hurray_version_string": (ctypes.c_char_p, []),
    "hurray_status_name": (ctypes.c_char_p, [c_i32]),
    "hurray_device_tag_name": (ctypes.c_char_p, [c_u8]),
    "hurray_memory_class_name": (ctypes.c_char_p, [c_u8]),
    "hurray_sync_mode_name": (ctypes.c_char_p, [c_u8]),
    "hurray_handle_decode": (status, [c_vp, ctypes.c_size_t, _P(BufferHandle), _P(Error)]),
    "hurray_handle_encode": (status, [_P(BufferHandle), c_vp, ctypes.c_size_t, _P(Error)]),
    "hurray_policy_create": (status, [_P(c_vp), _P(Error)]),
    "hurray_policy_destroy": (None, [c_vp]),
    "hurray_policy_set_transport": (status, [c_vp, c_i32, _P(Error)]),
    "hurray_policy_allow_private_tag": (status, [c_vp, c_u8, ctypes.c_int, _P(Error)]),
    "hurray_policy_set_warnings_as_errors": (status, [c_vp, ctypes.c_int, _P(Error)]),
    "hurray_table_validate": (status, [c_vp, ctypes.c_size_t, c_vp, _P(Error)]),
    "hurray_table_diagnose": (status, [c_vp, ctypes.c_size_t, c_vp, _P(Error), ctypes.c_size_t,
                                       _P(ctypes.c_size_t), _P(ctypes.c_size_t), _P(Error)]),
    "hurray_context_create": (status, [_P(c_vp), _P(Error)]),
    "hurray_context_destroy": (None, [c_vp]),
    "hurray_context_set_policy": (status, [c_vp, c_vp, _P(Error)]),
    "hurray_context_set_guard": (status, [c_vp, ctypes.c_int, _P(Error)]),
    "hurray_buffer_wrap": (status, [c_vp, _P(BufferDesc), _P(c_vp), _P(Error)]),
    "hurray_buffer_alloc": (status, [c_vp, _P(AllocDesc), _P(c_vp), _P(Error)]),
    "hurray_buffer_export": (status, [c_vp, _P(ExportDesc), _P(Handoff), _P(Error)]),
    "hurray_buffer_unref": (None, [c_vp]),
    "hurray_buffer_data": (c_vp, [c_vp]),
    "hurray_buffer_get_handle": (status, [c_vp, _P(BufferHandle), _P(Error)]),
    "hurray_handoff_check": (status, [_P(Handoff), c_vp, _P(Error)]),
    "hurray_handoff_release": (status, [_P(Handoff), _P(Error)]),
    "hurray_dlpack_device_to_dl": (status, [c_u8, c_u8, _P(c_i32), _P(Error)]),
    "hurray_dlpack_device_from_dl": (status, [c_i32, _P(c_u8), _P(c_u8), _P(Error)]),
    "hurray_dlpack_export_versioned": (status, [_P(Handoff), DLDataType, c_i32, _P(c_i64),
                                                _P(c_i64), c_u64,
                                                _P(_P(DLManagedTensorVersioned)), _P(Error)]),
    "hurray_dlpack_export_legacy": (status, [_P(Handoff), DLDataType, c_i32, _P(c_i64),
                                             _P(c_i64), c_u64, _P(_P(DLManagedTensor)),
                                             _P(Error)]),
    "hurray_dlpack_import_versioned": (status, [c_vp, c_vp, _P(Handoff), _P(Error)]),
    "hurray_dlpack_import_legacy": (status, [c_vp, c_vp, _P(Handoff), _P(Error)]),
}
for _name, (_res, _args) in _decls.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

# Added after 1.0's first bindings (issue 22): optional, so that an older
# libhurray still loads (the features that need them say so).
_optional = {
    "hurray_buffer_copy_to_host": (status, [c_vp, c_u64, c_vp, c_u64, _P(Error)]),
    "hurray_buffer_copy_from_host": (status, [c_vp, c_u64, c_vp, c_u64, _P(Error)]),
    "hurray_dlpack_import_versioned_opts": (status, [c_vp, c_vp, c_vp, _P(Handoff), _P(Error)]),
    "hurray_dlpack_import_legacy_opts": (status, [c_vp, c_vp, c_vp, _P(Handoff), _P(Error)]),
    "hurray_device_count": (status, [c_vp, c_u8, _P(c_i32), _P(Error)]),
    "hurray_device_info": (status, [c_vp, c_u8, c_i32, c_vp, _P(Error)]),
    "hurray_device_native": (status, [c_vp, c_u8, c_i32, _P(c_vp * 8), _P(Error)]),
    "hurray_event_record": (status, [c_vp, c_u8, c_i32, c_vp, _P(ExportDesc), _P(Error)]),
    "hurray_handoff_acquire": (status, [c_vp, _P(Handoff), c_vp, _P(Error)]),
    "hurray_handoff_release_event": (status, [_P(Handoff), _P(Error)]),
    "hurray_buffer_view": (status, [c_vp, c_u64, c_u64, _P(c_vp), _P(Error)]),  # issue 26
}
for _name, (_res, _args) in _optional.items():
    _f = getattr(lib, _name, None)
    if _f is not None:
        _f.restype = _res
        _f.argtypes = _args


EVENT_FREE_FN = ctypes.CFUNCTYPE(None, c_vp, c_vp)


class DeviceInfo(ctypes.Structure):  # hurray_backend_device_info
    _fields_ = [("name", ctypes.c_char * 128), ("memory_classes", c_u32), ("ipc", c_u32),
                ("min_alignment", c_u32), ("reserved0", c_u32), ("detail", ctypes.c_char * 256)]


class DLPackImportOptions(ctypes.Structure):
    _fields_ = [("size", c_u32), ("flags", c_u32), ("sync_mode", c_u32), ("reserved0", c_u32),
                ("stream", c_vp)]


assert ctypes.sizeof(DLPackImportOptions) == 24

# ---- hurray_ipc.h (optional: a libhurray built without IPC still loads) ----
class IPCOptions(ctypes.Structure):  # hurray_ipc_options as published in 1.0 (64 bytes)
    _fields_ = [("size", c_u32), ("flags", c_u32), ("hello_timeout_ms", c_i32),
                ("device_count", c_u32), ("device_tags", _P(c_u8)),
                ("allowed_uid_count", c_u32), ("allowed_gid_count", c_u32),
                ("allowed_uids", _P(c_u32)), ("allowed_gids", _P(c_u32)),
                ("io_timeout_ms", c_i32), ("max_queued", c_u32), ("max_queued_fds", c_u32),
                ("reserved0", c_u32)]


class IPCDeviceCaps(ctypes.Structure):
    _fields_ = [("device_tag", c_u8), ("reserved0", c_u8 * 3), ("memory_classes", c_u32)]


class IPCPeerInfo(ctypes.Structure):
    _fields_ = [("size", c_u32), ("protocol_version", c_u32), ("pid", c_i32),
                ("device_count", c_u32), ("devices", IPCDeviceCaps * 16),
                ("uid", c_u32), ("gid", c_u32)]


class IPCStats(ctypes.Structure):
    _fields_ = [("size", c_u32), ("closed", c_u32)] + [
        (n, c_u64) for n in ("sent", "released", "reclaimed", "outstanding", "received",
                             "releases_sent", "releases_failed", "releases_refused",
                             "messages_rejected")]


_ipc = {
    "hurray_ipc_listen": (status, [ctypes.c_char_p, _P(IPCOptions), _P(c_vp), _P(Error)]),
    "hurray_ipc_accept": (status, [c_vp, c_i32, _P(c_vp), _P(Error)]),
    "hurray_ipc_listener_destroy": (None, [c_vp]),
    "hurray_ipc_connect": (status, [ctypes.c_char_p, _P(IPCOptions), _P(c_vp), _P(Error)]),
    "hurray_ipc_close": (None, [c_vp]),
    "hurray_ipc_peer": (status, [c_vp, _P(IPCPeerInfo), _P(Error)]),
    "hurray_ipc_get_stats": (status, [c_vp, _P(IPCStats), _P(Error)]),
    "hurray_ipc_send": (status, [c_vp, c_vp, _P(ExportDesc), _P(c_u64), _P(Error)]),
    "hurray_ipc_progress": (status, [c_vp, c_i32, _P(c_u32), _P(Error)]),
    "hurray_ipc_receive": (status, [c_vp, c_i32, _P(Handoff), _P(c_u64), _P(Error)]),
    "hurray_ipc_release": (status, [_P(Handoff), _P(Error)]),
}
has_ipc = hasattr(lib, "hurray_ipc_connect")
if has_ipc:
    for _name, (_res, _args) in _ipc.items():
        _f = getattr(lib, _name)
        _f.restype = _res
        _f.argtypes = _args
