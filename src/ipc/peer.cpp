// Who may be at the other end of a channel (BP-IPC-PEER, docs/spec/ipc.md):
// the kernel's credentials of the peer (SO_PEERCRED: those of the process
// that connected, or that listened) against the channel's options.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "../core/internal.h"
#include "internal.h"

namespace hurray::ipc {

using hurray::detail::fail;

hurray_status check_peer(int fd, const Options &o, ucred *cred, hurray_error *err) {
  std::memset(cred, 0, sizeof *cred);
  socklen_t len = sizeof *cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) != 0 || len != sizeof *cred)
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-PEER: the peer's credentials cannot be read (SO_PEERCRED: %s)",
                std::strerror(errno));
  if (o.flags & HURRAY_IPC_ANY_PEER) return HURRAY_OK;
  const auto has = [](const std::vector<uint32_t> &v, uint32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (cred->uid == geteuid() || has(o.allowed_uids, cred->uid) || has(o.allowed_gids, cred->gid))
    return HURRAY_OK;
  return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
              "BP-IPC-PEER: the peer (pid %d, uid %u, gid %u) is neither this process's uid %u "
              "nor an allowed uid or gid (hurray_ipc_options.allowed_uids/allowed_gids)",
              static_cast<int>(cred->pid), static_cast<unsigned>(cred->uid),
              static_cast<unsigned>(cred->gid), static_cast<unsigned>(geteuid()));
}

}  // namespace hurray::ipc
