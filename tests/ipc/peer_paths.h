// The peer programs hurray_ipc_tests execs, whose paths tests/ipc/CMakeLists.txt
// passes as compile definitions: the test peer and the raw (hostile) peer.
#pragma once

#ifndef HURRAY_IPC_RAW_PEER
#error "HURRAY_IPC_RAW_PEER (path of hurray_ipc_raw_peer) is not defined"
#endif
#ifndef HURRAY_IPC_PEER
#error "HURRAY_IPC_PEER (path of hurray_ipc_test_peer) is not defined"
#endif
