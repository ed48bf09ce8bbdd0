// Validation from many threads with one shared, read-only policy.
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include "../common/table_util.h"

using namespace hurray_test;

TEST_CASE("validation with one shared policy from many threads", "[validate][threads]") {
  PolicyPtr ipc(HURRAY_TRANSPORT_IPC);
  const Bytes good = encode({make(8192, 4096, HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT)});
  const Bytes bad = encode({make(8192, 64, HURRAY_DEVICE_CUDA, HURRAY_SYNC_CONSUMER_STREAM)});
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        hurray_error err;
        if (hurray_table_validate(good.data(), good.size(), ipc, &err) != HURRAY_OK) ++wrong[t];
        if (hurray_table_validate(bad.data(), bad.size(), ipc, &err) != HURRAY_E_ALIGNMENT ||
            std::strcmp(err.rule_id, "BP-ALIGN-IPC") != 0)
          ++wrong[t];
      }
    });
  for (auto &th : threads) th.join();
  CHECK(wrong == std::vector<int>(4, 0));
}
