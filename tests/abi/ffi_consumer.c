/* A consumer that never links libhurray: it dlopen()s the library given as
 * argv[1], resolves every global name of hurray.map (hurray_map_symbols.h is
 * generated from it at configure time), with and without its version node,
 * and calls a set of functions through libffi with the signatures hurray.h
 * declares - the way language bindings (Python ctypes/cffi, ...) use it.
 * hurray.h is included for its constants and struct layouts only. */
#define _GNU_SOURCE /* dlvsym */
#include <dlfcn.h>
#include <ffi.h>
#include <stdio.h>
#include <string.h>

#include "hurray.h"
#include "hurray_map_symbols.h"
#include "../common/c_check.h"

static void *lib;

/* Call `name` through libffi. For integer results smaller than a register,
 * rvalue must point to an ffi_arg (libffi's rule). */
static void call(const char *name, ffi_type *rtype, unsigned nargs,
                 ffi_type **atypes, void *rvalue, void **avalues) {
  ffi_cif cif;
  void (*fn)(void);
  void *sym = dlsym(lib, name);
  if (!sym) {
    fprintf(stderr, "dlsym(%s) failed: %s\n", name, dlerror());
    ++failures;
    return;
  }
  memcpy(&fn, &sym, sizeof fn); /* object -> function pointer, ISO C clean */
  if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, nargs, rtype, atypes) != FFI_OK) {
    fprintf(stderr, "ffi_prep_cif(%s) failed\n", name);
    ++failures;
    return;
  }
  ffi_call(&cif, fn, rvalue, avalues);
}

static void resolve_map_symbols(void) {
  static const struct {
    const char *name, *version;
  } symbols[] = {
#define ENTRY(name, version) {name, version},
      HURRAY_MAP_SYMBOLS(ENTRY)
#undef ENTRY
  };
  size_t i, n = sizeof symbols / sizeof symbols[0];
  for (i = 0; i < n; ++i) {
    void *plain = dlsym(lib, symbols[i].name);
    void *versioned = dlvsym(lib, symbols[i].name, symbols[i].version);
    if (!plain || plain != versioned) {
      fprintf(stderr, "cannot resolve %s@%s (dlsym %p, dlvsym %p)\n",
              symbols[i].name, symbols[i].version, plain, versioned);
      ++failures;
    }
  }
  printf("looked up %zu names of hurray.map with dlsym and dlvsym\n", n);
}

int main(int argc, char **argv) {
  ffi_type *size_type = sizeof(size_t) == 8 ? &ffi_type_uint64 : &ffi_type_uint32;
  ffi_type *ptr = &ffi_type_pointer, *sint = &ffi_type_sint;
  ffi_arg uret = 0;
  ffi_sarg status = -1;
  const char *str = NULL;
  hurray_buffer_handle h, back;
  hurray_error err;
  hurray_policy *policy = NULL;
  unsigned char table[2 * HURRAY_HANDLE_SIZE];
  size_t size;
  int code;
  void *p_h = &h, *p_back = &back, *p_err = &err, *p_table = table;
  void *p_policy_out = &policy;

  if (argc != 2) {
    fprintf(stderr, "usage: %s path/to/libhurray.so.1\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen(%s) failed: %s\n", argv[1], dlerror());
    return 1;
  }
  resolve_map_symbols();

  /* unsigned hurray_version(void); const char *hurray_version_string(void); */
  call("hurray_version", &ffi_type_uint, 0, NULL, &uret, NULL);
  CHECK(uret == HURRAY_VERSION_NUMBER);
  call("hurray_version_string", ptr, 0, NULL, &str, NULL);
  CHECK(str && strcmp(str, HURRAY_VERSION_STRING) == 0);

  /* const char *hurray_status_name(hurray_status); */
  {
    ffi_type *args[] = {sint};
    void *values[] = {&code};
    code = HURRAY_E_COLOCATION;
    call("hurray_status_name", ptr, 1, args, &str, values);
    CHECK(str && strcmp(str, "HURRAY_E_COLOCATION") == 0);
    code = 12345;
    call("hurray_status_name", ptr, 1, args, &str, values);
    CHECK(str && strcmp(str, "HURRAY_E_UNKNOWN") == 0);
  }

  /* hurray_status hurray_handle_encode(const hurray_buffer_handle *, void *,
   *                                    size_t, hurray_error *);
   * hurray_status hurray_handle_decode(const void *, size_t,
   *                                    hurray_buffer_handle *, hurray_error *); */
  memset(&h, 0, sizeof h);
  h.byte_size = 0x0102030405060708u;
  h.alignment = HURRAY_MIN_ALIGNMENT;
  h.device_tag = HURRAY_DEVICE_CPU;
  {
    static const unsigned char wire[HURRAY_HANDLE_SIZE] = {
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x40, 0, 0, 0, 0, 0, 0, 0};
    ffi_type *args[] = {ptr, ptr, size_type, ptr};
    ffi_type *dec_args[] = {ptr, size_type, ptr, ptr};
    void *enc[] = {&p_h, &p_table, &size, &p_err};
    void *dec[] = {&p_table, &size, &p_back, &p_err};
    size = sizeof table;
    call("hurray_handle_encode", sint, 4, args, &status, enc);
    CHECK(status == HURRAY_OK && memcmp(table, wire, sizeof wire) == 0);
    size = HURRAY_HANDLE_SIZE;
    memset(&back, 0xAA, sizeof back);
    call("hurray_handle_decode", sint, 4, dec_args, &status, dec);
    CHECK(status == HURRAY_OK && memcmp(&back, &h, sizeof h) == 0);
  }

  /* hurray_status hurray_table_validate(const void *, size_t,
   *                                     const hurray_policy *, hurray_error *); */
  {
    void *no_policy = NULL;
    ffi_type *args[] = {ptr, size_type, ptr, ptr};
    void *values[] = {&p_table, &size, &no_policy, &p_err};
    memcpy(table + HURRAY_HANDLE_SIZE, table, HURRAY_HANDLE_SIZE);
    size = sizeof table;
    call("hurray_table_validate", sint, 4, args, &status, values);
    CHECK(status == HURRAY_OK);
    table[HURRAY_HANDLE_SIZE + 12] = HURRAY_DEVICE_CUDA; /* not colocated */
    call("hurray_table_validate", sint, 4, args, &status, values);
    CHECK(status == HURRAY_E_COLOCATION);
    CHECK(strcmp(err.rule_id, "BP-COLOC") == 0 && err.buffer_index == 1);
    table[HURRAY_HANDLE_SIZE + 12] = HURRAY_DEVICE_CPU;
  }

  /* hurray_status hurray_policy_create(hurray_policy **, hurray_error *);
   * hurray_status hurray_policy_set_transport(hurray_policy *,
   *                                           hurray_transport, hurray_error *);
   * void hurray_policy_destroy(hurray_policy *); */
  {
    ffi_type *create_args[] = {ptr, ptr};
    void *create_values[] = {&p_policy_out, &p_err};
    ffi_type *set_args[] = {ptr, sint, ptr};
    void *set_values[] = {&policy, &code, &p_err};
    ffi_type *validate_args[] = {ptr, size_type, ptr, ptr};
    void *validate_values[] = {&p_table, &size, &policy, &p_err};
    ffi_type *destroy_args[] = {ptr};
    void *destroy_values[] = {&policy};

    call("hurray_policy_create", sint, 2, create_args, &status, create_values);
    CHECK(status == HURRAY_OK && policy != NULL);
    code = HURRAY_TRANSPORT_IPC;
    call("hurray_policy_set_transport", sint, 3, set_args, &status, set_values);
    CHECK(status == HURRAY_OK);
    /* alignment 64 is below the 4096 that IPC requires */
    size = sizeof table;
    call("hurray_table_validate", sint, 4, validate_args, &status, validate_values);
    CHECK(status == HURRAY_E_ALIGNMENT);
    CHECK(strcmp(err.rule_id, "BP-ALIGN-IPC") == 0 && err.buffer_index == 0);
    code = 42; /* not a transport */
    call("hurray_policy_set_transport", sint, 3, set_args, &status, set_values);
    CHECK(status == HURRAY_E_INVALID_ARGUMENT);
    call("hurray_policy_destroy", &ffi_type_void, 1, destroy_args, NULL,
         destroy_values);
  }

  dlclose(lib);
  if (checks_failed("libffi consumer")) return 1;
  printf("libffi consumer: OK\n");
  return 0;
}
