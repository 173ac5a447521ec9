#include "collage/cost/worker_process.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

using std::chrono::duration;

WorkerProcess shell(const std::string& script) { return WorkerProcess({"/bin/sh", "-c", script}); }

TEST(WorkerProcessTest, RepliesComeBackLineByLine) {
  WorkerProcess worker = shell("while read line; do echo \"got $line\"; done");
  auto first = worker.request("one", duration<double>(5));
  auto second = worker.request("two", duration<double>(5));
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_EQ(first.value(), "got one");
  EXPECT_EQ(second.value(), "got two");
  EXPECT_EQ(worker.starts(), 1);
}

TEST(WorkerProcessTest, ACrashIsAFailureNamingTheSignal) {
  WorkerProcess worker = shell("read line; kill -SEGV $$");
  auto reply = worker.request("boom", duration<double>(5));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().find("signal 11"), std::string::npos) << reply.error();
}

TEST(WorkerProcessTest, AHangIsKilledAfterTheTimeout) {
  WorkerProcess worker = shell("read line; exec sleep 30");
  auto start = std::chrono::steady_clock::now();
  auto reply = worker.request("wait", duration<double>(0.3));
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().find("timed out"), std::string::npos) << reply.error();
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(WorkerProcessTest, TheWorkerIsRestartedAfterAFailure) {
  // Crashes on "die", echoes anything else.
  WorkerProcess worker =
      shell("while read line; do [ \"$line\" = die ] && kill -KILL $$; echo \"ok $line\"; done");
  EXPECT_FALSE(worker.request("die", duration<double>(5)).ok());
  auto reply = worker.request("again", duration<double>(5));
  ASSERT_TRUE(reply.ok()) << reply.error();
  EXPECT_EQ(reply.value(), "ok again");
  EXPECT_EQ(worker.starts(), 2);
}

TEST(WorkerProcessTest, AMissingProgramIsAFailureNotACrash) {
  WorkerProcess worker({"/nonexistent/collage-worker"});
  auto reply = worker.request("x", duration<double>(2));
  EXPECT_FALSE(reply.ok());
}

}  // namespace
}  // namespace collage
