// The IPC channel against hostile or buggy peers in real processes
// (hurray_ipc_raw_peer, raw_peer.cpp, speaks the wire format itself): each
// test breaks one rule and checks that this side stays up, refuses with the
// right status and rule, closes only that channel, still serves another one,
// and is back to its descriptors (and memory) of before.
#include <hurray_ipc.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include "peer_paths.h"
#include "../common/child_process.h"
#include "../common/open_fds.h"
#include "../common/proc_maps.h"
#include "../common/shareable_alloc.h"

namespace {

using hurray_test::open_fds;

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

using hurray_test::mapped;
using hurray_test::perms_of;

// Run a program with argv; its stdout is a pipe (*out). SIGKILLed and
// reaped by the destructor unless waited for.
struct Child : hurray_test::ChildProcess {
  explicit Child(std::initializer_list<std::string> args, int keep_fd = -1) {
    int pipefd[2];
    REQUIRE(pipe2(pipefd, O_CLOEXEC) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (keep_fd >= 0) fcntl(keep_fd, F_SETFD, 0);  // crosses exec
      dup2(pipefd[1], 1);
      std::vector<std::string> v(args);
      std::vector<char *> argv;
      for (std::string &s : v) argv.push_back(s.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(pipefd[1]);
    out = pipefd[0];
  }
  std::string read_out(size_t n) {
    std::string s(n, '\0');
    size_t got = 0;
    while (got < n) {
      const ssize_t r = read(out, &s[got], n - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    s.resize(got);
    return s;
  }
};

// A raw peer on one end of a socket pair; this side's channel on the other.
struct Raw {
  Child *child = nullptr;
  hurray_ipc_channel *ch = nullptr;
  hurray_status made = HURRAY_E_INTERNAL;
  hurray_error err{};
  // ready: wait for the child's 'R' (what it sends first is all there)
  Raw(const char *mode, long n = 1, const hurray_ipc_options *opts = nullptr, bool ready = false) {
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    child = new Child({HURRAY_IPC_RAW_PEER, mode, std::to_string(sv[1]), std::to_string(n)}, sv[1]);
    close(sv[1]);
    if (ready) REQUIRE(child->read_out(1) == "R");
    made = hurray_ipc_channel_from_fd(sv[0], opts, &ch, &err);
  }
  ~Raw() {
    hurray_ipc_close(ch);
    delete child;
  }
  int wait_exit() { return child->wait_exit(); }
};

hurray_ipc_stats stats(hurray_ipc_channel *ch) {
  hurray_ipc_stats s;
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
  return s;
}

hurray_buffer *shareable(uint64_t size, int fill) {
  hurray_buffer *b = hurray_test::alloc_shareable(size, HURRAY_IPC_ALIGNMENT);
  std::memset(hurray_buffer_data(b), fill, size);
  return b;
}

// A fresh directory under /tmp for a socket path, removed (when empty) at
// the end of the test.
struct TempDir {
  char dir[40] = "/tmp/hurray-ipc-hostile-XXXXXX";
  TempDir() { REQUIRE(mkdtemp(dir)); }
  ~TempDir() { rmdir(dir); }
  std::string file(const char *name) const { return std::string(dir) + "/" + name; }
};

hurray_ipc_listener *listen_at(const std::string &path) {
  hurray_ipc_listener *l = nullptr;
  REQUIRE(hurray_ipc_listen(path.c_str(), nullptr, &l, nullptr) == HURRAY_OK);
  return l;
}

bool has(const hurray_error &e, const char *what) {
  return std::strstr(e.message, what) != nullptr;
}

// This process still serves another channel: a consumer in another process
// (hurray_ipc_test_peer consume) gets a buffer and releases it.
void serves_another() {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  Child c({HURRAY_IPC_PEER, "consume", std::to_string(sv[1]), "1"}, sv[1]);
  close(sv[1]);
  hurray_ipc_channel *ch = nullptr;
  REQUIRE(hurray_ipc_channel_from_fd(sv[0], nullptr, &ch, nullptr) == HURRAY_OK);
  hurray_buffer *b = shareable(4096, 1);
  REQUIRE(hurray_ipc_send(ch, b, nullptr, nullptr, nullptr) == HURRAY_OK);
  hurray_buffer_unref(b);
  for (int i = 0; i < 100 && stats(ch).released == 0; ++i)
    if (hurray_ipc_progress(ch, 100, nullptr, nullptr) != HURRAY_OK) break;
  CHECK(stats(ch).released == 1);
  hurray_ipc_close(ch);
  CHECK(c.wait_exit() == 0);
}

// The refusal this side gives to what the raw peer sent right after its
// HELLO: in the handshake when both came in one read, else in the next
// receive (or progress). Either way the channel is closed.
hurray_status refused(Raw &r, hurray_error *err, bool receive = true) {
  if (r.made != HURRAY_OK) {
    *err = r.err;
    return r.made;
  }
  hurray_handoff h;
  const hurray_status st = receive ? hurray_ipc_receive(r.ch, 10000, &h, nullptr, err)
                                   : hurray_ipc_progress(r.ch, 10000, nullptr, err);
  if (receive && st == HURRAY_OK) hurray_ipc_release(&h, nullptr);
  if (st != HURRAY_OK) CHECK(stats(r.ch).closed == 1);
  return st;
}

// A producer's event loop on r's channel until a call fails (bounded).
hurray_status progress_until_refused(Raw &r, hurray_error *err) {
  hurray_status st = HURRAY_OK;
  for (int i = 0; i < 1000 && st == HURRAY_OK; ++i)
    st = hurray_ipc_progress(r.ch, 10000, nullptr, err);
  return st;
}

// A raw peer in `mode` whose message this side refuses as PROTOCOL, the
// refusal saying `says`; the peer exits 0 (it saw this side hang up).
// receive: found by hurray_ipc_receive (false: by progress).
void refuses(const char *mode, const char *says, bool receive = true) {
  Raw r(mode);
  hurray_error err{};
  CHECK(refused(r, &err, receive) == HURRAY_E_PROTOCOL);
  INFO(err.message);
  CHECK(has(err, says));
  CHECK(r.wait_exit() == 0);
}

// refuses(mode, says), after which this side holds no descriptor more than
// before (what came with the message is closed) and serves another peer.
void refuses_cleanly(const char *mode, const char *says) {
  const int fds = open_fds();
  refuses(mode, says);
  CHECK(open_fds() == fds);
  serves_another();
}

}  // namespace

TEST_CASE("hostile: an over-long HANDOFF is malformed and closes the channel") {
  refuses_cleanly("overlong", "HANDOFF body of 217 bytes");
}

TEST_CASE("hostile: a RELEASE of ID 0 is malformed and closes the channel") {
  refuses("release0", "RELEASE id 0", false);
}

TEST_CASE("hostile: a received handle is checked under the IPC rules (a 64-aligned memfd)") {
  const int fds = open_fds();
  {
    Raw r("align64");
    hurray_error err{};
    CHECK(refused(r, &err) == HURRAY_E_PROTOCOL);
    CHECK(err.rule == HURRAY_RULE_ALIGN_IPC);
    CHECK(r.wait_exit() == 0);
  }
  CHECK(open_fds() == fds);  // the memfd that came is closed
}

TEST_CASE("hostile: a memfd smaller than the buffer, of another kind, at an odd offset or read-only for a writable handoff is refused") {
  const int fds = open_fds();
  struct Case {
    const char *mode, *says;
  };
  for (const Case &k : {Case{"short", "not a memory file of at least 8192 bytes"},
                        Case{"kind1", "BP-IPC-KIND"}, Case{"offset", "not page-aligned"},
                        Case{"rofd", "cannot be mapped writable"}}) {
    INFO(k.mode);
    refuses(k.mode, k.says);
  }
  CHECK(open_fds() == fds);  // each memfd that came is closed
  serves_another();
}

TEST_CASE("hostile: a memfd not sealed against shrinking is refused before it is mapped") {
  refuses_cleanly("unsealed", "BP-IPC-SEAL");
}

TEST_CASE("hostile: HELLO comes first, and only once") {
  const int fds = open_fds();
  {
    Raw r("hello-first");
    CHECK(r.made == HURRAY_E_PROTOCOL);
    CHECK(has(r.err, "BP-IPC-HELLO: the first message is not HELLO"));
    CHECK(r.wait_exit() == 0);
  }
  refuses("hello-twice", "BP-IPC-HELLO: HELLO after the handshake", false);
  {  // both HELLOs there before this side reads: the handshake itself fails
    Raw r("hello-hello", 1, nullptr, true);
    CHECK(r.made == HURRAY_E_PROTOCOL);
    CHECK(has(r.err, "BP-IPC-HELLO: HELLO after the handshake"));
    CHECK(r.ch == nullptr);
    CHECK(r.wait_exit() == 0);
  }
  CHECK(open_fds() == fds);
}

TEST_CASE("hostile: a bad DEVICES closes the channel at the offending byte") {
  const int fds = open_fds();
  struct Case {
    const char *mode;
    int64_t offset;  // -1: the datagram is too long (no field to name)
    const char *what;
  };
  const Case cases[] = {
      {"devices-first", 6, "BP-IPC-HELLO: the first message is not HELLO"},
      {"devices-v1", 6, "BP-IPC-HELLO: DEVICES from a peer that does not send it"},
      {"devices-none", 6, "BP-IPC-HELLO: the message after HELLO is not DEVICES"},
      {"devices-short", 8, "DEVICES body of 24 bytes for 1 devices"},
      {"devices-kind", 24, "DEVICES device 0: identity of kind 7"},
      {"devices-dup", 44, "listed twice"},
      {"devices-many", 16, "DEVICES of 33 devices (at most 32)"},
      {"devices-huge", -1, "longer than 16404 bytes"},
      {"devices-tag", 20, "which the peer's HELLO did not announce"},
      {"devices-twice", 6, "BP-IPC-HELLO: DEVICES again"},
  };
  for (const Case &c : cases) {
    INFO(c.mode);
    Raw r(c.mode);
    hurray_error err{};
    hurray_status st = refused(r, &err, false);
    if (st == HURRAY_OK)  // devices-twice: the RELEASE before the second DEVICES
      st = hurray_ipc_progress(r.ch, 10000, nullptr, &err);
    CHECK(st == HURRAY_E_PROTOCOL);
    INFO(err.message);
    CHECK(has(err, c.what));
    CHECK(err.byte_offset == c.offset);
    CHECK(r.wait_exit() == 0);  // this side hung up
  }
  CHECK(open_fds() == fds);
  serves_another();
}

TEST_CASE("hostile: a flood of HANDOFFs to a side that never receives is bounded") {
  const int fds = open_fds();
  const long rss = rss_kib();
  hurray_ipc_options few_fds = HURRAY_IPC_OPTIONS_INIT;
  few_fds.max_queued = 100000;
  few_fds.max_queued_fds = 16;
  for (int pass = 0; pass < 3; ++pass) {
    const char *mode = pass == 1 ? "flood-empty" : "flood";
    INFO(mode << " pass " << pass);
    Raw r(mode, pass == 1 ? 100000 : 1000, pass == 2 ? &few_fds : nullptr);
    REQUIRE(r.made == HURRAY_OK);
    hurray_error err{};
    CHECK(progress_until_refused(r, &err) == HURRAY_E_PROTOCOL);
    CHECK(has(err, "BP-IPC-LIMIT"));
    CHECK(stats(r.ch).closed == 1);
    CHECK(open_fds() == fds + 2);  // every queued descriptor closed (the socket and the
                                   // raw peer's pipe remain until the end of the scope)
    hurray_handoff h;
    CHECK(hurray_ipc_receive(r.ch, 0, &h, nullptr, nullptr) == HURRAY_E_IO);  // nothing kept
    CHECK(r.wait_exit() == 0);
  }
  CHECK(open_fds() == fds);
  CHECK(rss_kib() - rss < 8192);  // 10^5 queued empty handoffs were 37 MiB
  serves_another();
}

TEST_CASE("hostile: a send-only channel announces nothing and refuses what comes") {
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.flags = HURRAY_IPC_SEND_ONLY;
  {
    Raw r("announce", 1, &o);
    REQUIRE(r.made == HURRAY_OK);
    CHECK(r.child->read_out(2) == "D0");
  }
  Raw r("flood-empty", 1, &o);
  hurray_error err{};
  CHECK(refused(r, &err, false) == HURRAY_E_PROTOCOL);
  CHECK(has(err, "BP-IPC-ANNOUNCED"));
  CHECK(has(err, "send-only"));
  CHECK(r.wait_exit() == 0);
}

TEST_CASE("hostile: a consumer that stops reading gets its channel closed, the producer goes on") {
  const int fds = open_fds();
  {
    hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
    o.io_timeout_ms = 200;
    Raw r("stuck", 1, &o);
    REQUIRE(r.made == HURRAY_OK);
    REQUIRE(r.child->read_out(1) == "R");
    hurray_buffer *b = shareable(4096, 3);
    hurray_status st = HURRAY_OK;
    hurray_error err{};
    int sent = 0;
    for (; sent < 100000 && st == HURRAY_OK; ++sent)
      st = hurray_ipc_send(r.ch, b, nullptr, nullptr, &err);
    CHECK(st == HURRAY_E_IO);
    CHECK(has(err, "io_timeout_ms"));
    const hurray_ipc_stats s = stats(r.ch);
    CHECK(s.closed == 1);
    CHECK(s.outstanding == 0);
    CHECK(s.reclaimed == s.sent);
    hurray_buffer_unref(b);
  }
  CHECK(open_fds() == fds);
  serves_another();
}

TEST_CASE("hostile: a producer that stops reading gets its channel closed, releases return") {
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.io_timeout_ms = 200;
  o.max_queued = 5000;  // what arrives while a release waits for room is queued
  Raw r("stuck-after", 2000, &o);
  REQUIRE(r.made == HURRAY_OK);
  hurray_status st = HURRAY_OK;
  hurray_error err{};
  int released = 0;
  for (; released < 2000 && st == HURRAY_OK; ++released) {
    hurray_handoff h;
    REQUIRE(hurray_ipc_receive(r.ch, 10000, &h, nullptr, nullptr) == HURRAY_OK);
    st = hurray_ipc_release(&h, &err);  // its RELEASE finds no room, once the socket is full
  }
  CHECK(st == HURRAY_E_IO);
  CHECK(has(err, "io_timeout_ms"));
  CHECK(stats(r.ch).closed == 1);
  CHECK(stats(r.ch).releases_failed == 1);
}

TEST_CASE("hostile: a consumer cannot shrink, grow or seal what it got, nor write a READ_ONLY one") {
  const int fds = open_fds();
  for (int read_only = 0; read_only < 2; ++read_only) {
    INFO("read_only " << read_only);
    Raw r("grab", read_only);
    REQUIRE(r.made == HURRAY_OK);
    hurray_buffer *b = shareable(8192, 5);
    hurray_export_desc d = HURRAY_EXPORT_DESC_INIT;
    if (read_only) d.flags = HURRAY_HANDOFF_READ_ONLY;
    REQUIRE(hurray_ipc_send(r.ch, b, &d, nullptr, nullptr) == HURRAY_OK);
    for (int i = 0; i < 100 && stats(r.ch).released == 0; ++i)
      if (hurray_ipc_progress(r.ch, 100, nullptr, nullptr) != HURRAY_OK) break;
    CHECK(stats(r.ch).released == 1);
    CHECK(r.wait_exit() == 0);  // every attack on the descriptor failed
    for (int i = 0; i < 8192; i += 512) CHECK(static_cast<unsigned char *>(hurray_buffer_data(b))[i] == 5);
    hurray_buffer_unref(b);
  }
  CHECK(open_fds() == fds);
}

TEST_CASE("hostile: a READ_ONLY handoff is mapped read-only by the consumer") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  hurray_ipc_channel *a = nullptr, *c = nullptr;
  hurray_status sc = HURRAY_E_INTERNAL;
  std::thread t([&] { sc = hurray_ipc_channel_from_fd(sv[1], nullptr, &c, nullptr); });
  REQUIRE(hurray_ipc_channel_from_fd(sv[0], nullptr, &a, nullptr) == HURRAY_OK);
  t.join();
  REQUIRE(sc == HURRAY_OK);
  hurray_buffer *b = shareable(8192, 9);
  for (int read_only = 0; read_only < 2; ++read_only) {
    hurray_export_desc d = HURRAY_EXPORT_DESC_INIT;
    if (read_only) d.flags = HURRAY_HANDOFF_READ_ONLY;
    REQUIRE(hurray_ipc_send(a, b, &d, nullptr, nullptr) == HURRAY_OK);
    hurray_handoff h;
    hurray_error err{};
    const hurray_status st = hurray_ipc_receive(c, 10000, &h, nullptr, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    CHECK(perms_of(h.data) == (read_only ? "r--s" : "rw-s"));
    CHECK(static_cast<const unsigned char *>(h.data)[100] == 9);
    REQUIRE(hurray_ipc_release(&h, nullptr) == HURRAY_OK);
  }
  hurray_ipc_close(c);
  hurray_ipc_close(a);
  hurray_buffer_unref(b);
}

TEST_CASE("hostile: silent connections hold up neither accept nor a correct consumer") {
  TempDir tmp;
  const std::string path = tmp.file("s");
  hurray_ipc_listener *l = listen_at(path);
  {
    Child s1({HURRAY_IPC_RAW_PEER, "silent", path}), s2({HURRAY_IPC_RAW_PEER, "silent", path});
    REQUIRE(s1.read_out(1) == "R");
    REQUIRE(s2.read_out(1) == "R");
    hurray_ipc_channel *ch = nullptr;
    hurray_error err{};
    // nothing but silent connections: accept(0) does not wait for their HELLO
    CHECK(hurray_ipc_accept(l, 0, &ch, &err) == HURRAY_E_IO);
    // nor for the DEVICES of one whose HELLO (version 2) came, but not its DEVICES
    Child mute({HURRAY_IPC_RAW_PEER, "mute-devices", path});
    for (int i = 0; i < 100 && hurray_ipc_accept(l, 10, &ch, &err) == HURRAY_E_IO; ++i)
      if (std::strstr(err.message, "(3 handshakes")) break;  // took it, sent HELLO
    REQUIRE(mute.read_out(1) == "R");  // it has the HELLO; its own was sent before
    CHECK(hurray_ipc_accept(l, 200, &ch, &err) == HURRAY_E_IO);
    // peers that hang up, before accept took them or while their handshake
    // waits in the listener, are no error of accept's
    Child gone({HURRAY_IPC_RAW_PEER, "hangup", path});
    REQUIRE(gone.wait_exit() == 0);
    REQUIRE(kill(s1.pid, SIGKILL) == 0);
    REQUIRE(s1.wait_exit() == 128 + SIGKILL);
    Child good({HURRAY_IPC_PEER, "connect", path, "1"});
    err = hurray_error{};
    const hurray_status st = hurray_ipc_accept(l, 10000, &ch, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    hurray_ipc_peer_info info;
    info.size = sizeof info;
    REQUIRE(hurray_ipc_peer(ch, &info, nullptr) == HURRAY_OK);
    CHECK(info.pid == good.pid);
    CHECK(info.uid == geteuid());
    CHECK(info.gid == getegid());
    hurray_buffer *b = shareable(4096, 1);
    REQUIRE(hurray_ipc_send(ch, b, nullptr, nullptr, nullptr) == HURRAY_OK);
    hurray_buffer_unref(b);
    CHECK(good.wait_exit() == 0);
    hurray_ipc_close(ch);
    hurray_ipc_listener_destroy(l);
    l = nullptr;
    CHECK(mute.wait_exit() == 0);  // its handshake was closed with the listener
  }
  // a handshake waiting for DEVICES is closed when hello_timeout_ms passes
  hurray_ipc_options quick = HURRAY_IPC_OPTIONS_INIT;
  quick.hello_timeout_ms = 300;
  REQUIRE(hurray_ipc_listen(path.c_str(), &quick, &l, nullptr) == HURRAY_OK);
  {
    Child mute({HURRAY_IPC_RAW_PEER, "mute-devices", path});
    hurray_ipc_channel *ch = nullptr;
    hurray_error err{};
    CHECK(hurray_ipc_accept(l, 1000, &ch, &err) == HURRAY_E_IO);
    CHECK(has(err, "(0 handshakes waiting)"));
    REQUIRE(mute.read_out(1) == "R");
    CHECK(mute.wait_exit() == 0);  // closed by the listener, which is still open
  }
  hurray_ipc_listener_destroy(l);
}

TEST_CASE("hostile: a peer that hangs up right after its HELLO is still accepted, gone") {
  TempDir tmp;
  const std::string path = tmp.file("s");
  hurray_ipc_listener *l = listen_at(path);
  {
    Child bye({HURRAY_IPC_RAW_PEER, "hello-bye", path});
    hurray_ipc_channel *ch = nullptr;
    hurray_error err{};
    for (int i = 0; i < 1000 && hurray_ipc_accept(l, 0, &ch, &err) == HURRAY_E_IO; ++i) {
      if (std::strstr(err.message, "(1 handshakes")) break;  // took it, sent HELLO
      usleep(2000);
    }
    REQUIRE(bye.wait_exit() == 0);  // it read the HELLO, sent its own, hung up
    // its HELLO and its hang-up are read together: the handshake is done all
    // the same (a slow run may already have finished it in the loop above)
    if (ch == nullptr) {
      err = hurray_error{};
      const hurray_status st = hurray_ipc_accept(l, 1000, &ch, &err);
      INFO(err.message);
      REQUIRE(st == HURRAY_OK);
    }
    REQUIRE(ch != nullptr);
    hurray_handoff h;
    CHECK(hurray_ipc_receive(ch, 0, &h, nullptr, nullptr) == HURRAY_E_IO);  // it is gone
    hurray_ipc_close(ch);
  }
  hurray_ipc_listener_destroy(l);
}

TEST_CASE("hostile: the socket is 0600 whatever the umask, and a live path is not taken over") {
  TempDir tmp;
  const std::string path = tmp.file("s");
  const mode_t old = umask(0);
  hurray_ipc_listener *l1 = nullptr, *l2 = nullptr, *l3 = nullptr;
  const hurray_status st1 = hurray_ipc_listen(path.c_str(), nullptr, &l1, nullptr);
  umask(old);
  REQUIRE(st1 == HURRAY_OK);
  struct stat sb;
  REQUIRE(lstat(path.c_str(), &sb) == 0);
  CHECK((sb.st_mode & 0777) == 0600);
  // a second listener on a live path is refused, and the first keeps its file
  hurray_error err{};
  CHECK(hurray_ipc_listen(path.c_str(), nullptr, &l2, &err) == HURRAY_E_IO);
  CHECK(has(err, "BP-IPC-LISTEN"));
  struct stat again;
  REQUIRE(lstat(path.c_str(), &again) == 0);
  CHECK(again.st_ino == sb.st_ino);
  // the path taken over behind the first listener's back: its close leaves
  // the new socket alone
  REQUIRE(unlink(path.c_str()) == 0);
  REQUIRE(hurray_ipc_listen(path.c_str(), nullptr, &l3, nullptr) == HURRAY_OK);
  REQUIRE(lstat(path.c_str(), &again) == 0);
  hurray_ipc_listener_destroy(l1);
  struct stat after;
  CHECK(lstat(path.c_str(), &after) == 0);
  CHECK(after.st_ino == again.st_ino);
  hurray_ipc_listener_destroy(l3);
  CHECK(lstat(path.c_str(), &after) != 0);  // its own file: removed
  // a stale socket file (its listener gone) is replaced
  const int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  REQUIRE(bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
  close(s);
  REQUIRE(hurray_ipc_listen(path.c_str(), nullptr, &l2, nullptr) == HURRAY_OK);
  hurray_ipc_listener_destroy(l2);
}

// Another uid needs root here (setuid in the child): exit 77 (skipped) else.
TEST_CASE("hostile: a peer of another uid is refused on accept and on connect", "[.uid]") {
  if (geteuid() != 0) {
    std::printf("skipped: not root, cannot run a peer of another uid\n");
    std::exit(77);
  }
  char dir[] = "/tmp/hurray-ipc-uid-XXXXXX";
  REQUIRE(mkdtemp(dir));
  REQUIRE(chmod(dir, 0777) == 0);
  const std::string path = std::string(dir) + "/s", other = std::string(dir) + "/o";
  const int fds = open_fds();
  {
    hurray_ipc_listener *l = nullptr;
    REQUIRE(hurray_ipc_listen(path.c_str(), nullptr, &l, nullptr) == HURRAY_OK);
    {  // mode 0600: uid 65534 cannot even connect
      Child c({HURRAY_IPC_RAW_PEER, "hello-as", "65534", path});
      CHECK(c.wait_exit() == 2);
    }
    REQUIRE(chmod(path.c_str(), 0666) == 0);  // widened by hand: the uid check remains
    {
      Child c({HURRAY_IPC_RAW_PEER, "hello-as", "65534", path});
      hurray_ipc_channel *ch = nullptr;
      hurray_error err{};
      CHECK(hurray_ipc_accept(l, 10000, &ch, &err) == HURRAY_E_PROTOCOL);
      CHECK(has(err, "BP-IPC-PEER"));
      CHECK(has(err, "uid 65534"));
      CHECK(c.wait_exit() == 3);  // hung up on before any HELLO
    }
    hurray_ipc_listener_destroy(l);
  }
  {  // allowed by uid
    const uint32_t uids[] = {65534};
    hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
    o.allowed_uid_count = 1;
    o.allowed_uids = uids;
    hurray_ipc_listener *l = nullptr;
    REQUIRE(hurray_ipc_listen(path.c_str(), &o, &l, nullptr) == HURRAY_OK);
    REQUIRE(chmod(path.c_str(), 0666) == 0);
    Child c({HURRAY_IPC_RAW_PEER, "hello-as", "65534", path});
    hurray_ipc_channel *ch = nullptr;
    hurray_error err{};
    const hurray_status st = hurray_ipc_accept(l, 10000, &ch, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    hurray_ipc_peer_info info;
    info.size = sizeof info;
    REQUIRE(hurray_ipc_peer(ch, &info, nullptr) == HURRAY_OK);
    CHECK(info.uid == 65534);
    CHECK(info.gid == 65534);
    CHECK(info.pid == c.pid);
    CHECK(c.wait_exit() == 0);
    hurray_ipc_close(ch);
    hurray_ipc_listener_destroy(l);
  }
  {  // connect: the listener's uid is checked too
    Child c({HURRAY_IPC_RAW_PEER, "listen-as", "65534", other});
    REQUIRE(c.read_out(1) == "R");
    hurray_ipc_channel *ch = nullptr;
    hurray_error err{};
    CHECK(hurray_ipc_connect(other.c_str(), nullptr, &ch, &err) == HURRAY_E_PROTOCOL);
    CHECK(has(err, "BP-IPC-PEER"));
    CHECK(c.wait_exit() == 3);
  }
  CHECK(open_fds() == fds);
  rmdir(dir);
}

// Run with the stand-in plugin serving tag CUDA on the search path: a
// CPU-only consumer refuses a CUDA HANDOFF without loading it.
TEST_CASE("hostile: a HANDOFF of a device this side did not announce loads no plugin",
          "[.unannounced]") {
  REQUIRE_FALSE(mapped("libhurray-ipcfake"));
  Raw r("unannounced");
  hurray_error err{};
  CHECK(refused(r, &err) == HURRAY_E_PROTOCOL);
  CHECK(has(err, "BP-IPC-ANNOUNCED"));
  CHECK_FALSE(mapped("libhurray-ipcfake"));  // no plugin load, no vendor call
  CHECK(r.wait_exit() == 0);
}

TEST_CASE("hostile: with COPY_PER_SEND a consumer keeps nothing of the producer's memory") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.flags = HURRAY_IPC_COPY_PER_SEND;
  hurray_ipc_channel *a = nullptr, *c = nullptr;
  hurray_status sc = HURRAY_E_INTERNAL;
  std::thread t([&] { sc = hurray_ipc_channel_from_fd(sv[1], nullptr, &c, nullptr); });
  REQUIRE(hurray_ipc_channel_from_fd(sv[0], &o, &a, nullptr) == HURRAY_OK);
  t.join();
  REQUIRE(sc == HURRAY_OK);
  hurray_buffer *b = shareable(8192, 0x11);
  REQUIRE(hurray_ipc_send(a, b, nullptr, nullptr, nullptr) == HURRAY_OK);
  hurray_handoff h;
  REQUIRE(hurray_ipc_receive(c, 10000, &h, nullptr, nullptr) == HURRAY_OK);
  const auto *seen = static_cast<const unsigned char *>(h.data);
  CHECK(seen[0] == 0x11);
  std::memset(hurray_buffer_data(b), 0x22, 8192);  // the producer's next contents
  CHECK(seen[0] == 0x11);                           // not the consumer's to see
  CHECK(seen[8191] == 0x11);
  REQUIRE(hurray_ipc_release(&h, nullptr) == HURRAY_OK);
  hurray_ipc_close(c);
  hurray_ipc_close(a);
  hurray_buffer_unref(b);
}

TEST_CASE("hostile: WINDOW (protocol 3) is told as the options say, and a peer beyond it is cut off") {
  {
    hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
    o.max_queued = 7;
    o.max_queued_fds = 9;
    Raw r("window-read", 1, &o);
    REQUIRE(r.made == HURRAY_OK);
    CHECK(r.child->read_out(4) == "W7/9");
  }
  Raw r("window-flood", 300);  // the default window: 128 handoffs
  REQUIRE(r.made == HURRAY_OK);
  hurray_error err{};
  CHECK(progress_until_refused(r, &err) == HURRAY_E_PROTOCOL);
  CHECK(has(err, "BP-IPC-LIMIT"));
  CHECK(stats(r.ch).closed == 1);
  CHECK(r.wait_exit() == 0);
  serves_another();
}

TEST_CASE("hostile: a malformed, missing, repeated or unannounced WINDOW is refused") {
  for (const char *mode : {"window-zero", "window-fds", "window-none", "window-twice", "window-v2"}) {
    INFO(mode);
    Raw r(mode);
    hurray_error err{};
    CHECK(refused(r, &err, false) == HURRAY_E_PROTOCOL);
    INFO(err.message);
    const std::string m = mode;
    if (m == "window-zero") CHECK(has(err, "WINDOW of 0 handoffs"));
    if (m == "window-fds") CHECK(has(err, "WINDOW of 1 descriptors"));
    if (m == "window-none") CHECK(has(err, "not WINDOW"));
    if (m == "window-twice") CHECK(has(err, "WINDOW again"));
    if (m == "window-v2") CHECK(has(err, "WINDOW from a peer that does not send it"));
    CHECK(r.wait_exit() == 0);
  }
  serves_another();
}
