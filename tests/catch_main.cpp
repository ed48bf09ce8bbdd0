// main() of the Catch2 test programs. As `-w NoTests` on every command line:
// a test spec that matches no test case is an error (exit 2), not a pass, so
// an entry that has lost its test case cannot pass without running anything
// (Catch2 2.13 exits 0 there by default). cmake/Catch.cmake passes the flag
// to catch_discover_tests' entries too, for programs with their own main().
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

int main(int argc, char **argv) {
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv)) return rc;
  auto &config = session.configData();
  config.warnings = static_cast<Catch::WarnAbout::What>(config.warnings | Catch::WarnAbout::NoTests);
  return session.run();
}
