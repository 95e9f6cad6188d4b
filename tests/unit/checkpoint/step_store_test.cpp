// The code above the Storage interface over the memory engine, in one process: a step claimed,
// written, committed (manifest, syncs, rename), listed, read back as a restart would, removed by
// --keep and at a run's end, with the safety rules of step_dirs (only ccbench's sound manifests
// are steps; only the files a manifest lists are removed; a user's file keeps its step). The same
// calls over S3 (a bucket in memory): s3_test.cpp, "S3Steps".
#include "checkpoint/step_store.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/memory_storage.hpp"
#include "checkpoint/step_dirs.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint {
namespace {

const std::string kTarget = "mem/ckpt";

std::string manifest_text(int step, const std::string& run, int shards) {
  nlohmann::json files = nlohmann::json::array(), list = nlohmann::json::array();
  for (int w = 0; w < shards; ++w) {
    files.push_back(shard_name(w));
    list.push_back({{"writer", w}});
  }
  return nlohmann::json{{"tool", kManifestTool},
                        {"version", kManifestVersion},
                        {"run", run},
                        {"step", step},
                        {"trial", 0},
                        {"seed", 1},
                        {"shard_bytes", 4096},
                        {"shards", list},
                        {"files", files}}
      .dump();
}

void put(Storage& storage, const std::string& path, const std::string& text) {
  auto f = storage.open(path, OpenFor::create_write, {});
  f->write_at(text.data(), text.size(), 0);
  f->close();
}

std::string get(Storage& storage, const std::string& path, std::size_t bytes) {
  std::string text(bytes, '\0');
  storage.open(path, OpenFor::read, {})->read_at(text.data(), bytes, 0);
  return text;
}

// One write trial as the command runs it: number, claim, the partial step, every writer's shard
// (threads as ranks), the commit. Returns the committed step's path.
std::string write_trial(Storage& storage, const std::string& run, int writers) {
  const int step = last_step(storage.entries(kTarget)) + 1;
  const std::string name = storage.claim_step(kTarget, step);
  const std::string committed = kTarget + "/" + name;
  const std::string partial = storage.commits_by_rename() ? kTarget + "/" + partial_name(step, run) : committed;
  storage.make_dir(partial);
  std::vector<std::thread> ranks;
  for (int w = 0; w < writers; ++w)
    ranks.emplace_back([&, w] {
      auto f = storage.open(partial + "/" + shard_name(w), OpenFor::create_write, {});
      const std::string data(4096, static_cast<char>('a' + w));
      f->write_at(data.data(), 2048, 0);
      f->write_at(data.data() + 2048, 2048, 2048);
      f->sync();
      f->close();
    });
  for (auto& r : ranks) r.join();
  commit_step(storage, kTarget, partial, committed, manifest_text(step, run, writers));
  return committed;
}

TEST(StepStore, ATrialOverTheMemoryEngineCommitsByRenameAndSyncsWhatThePosixOneDoes) {
  MemoryStorage storage({"mem", kTarget});
  EXPECT_EQ(storage.engine(), Engine::memory);
  EXPECT_STREQ(engine_name(storage.engine()), "memory");
  const std::string step = write_trial(storage, "r1", 2);
  EXPECT_EQ(step, kTarget + "/step-000001");
  const std::vector<std::string> expect = {"mem/",
                                           "mem/ckpt/",
                                           "mem/ckpt/step-000001/",
                                           "mem/ckpt/step-000001/ccbench-manifest.json",
                                           "mem/ckpt/step-000001/rank-00000.shard",
                                           "mem/ckpt/step-000001/rank-00001.shard"};
  EXPECT_EQ(storage.paths(), expect);  // no partial step left
  EXPECT_EQ(get(storage, step + "/rank-00001.shard", 4096), std::string(4096, 'b'));
  EXPECT_EQ(storage.syncs(kTarget + "/" + partial_name(1, "r1") + "/" + kManifestName), 1);
  EXPECT_EQ(storage.syncs(kTarget + "/" + partial_name(1, "r1")), 1);  // the step, before its rename
  EXPECT_EQ(storage.syncs(kTarget), 1);                                // the target, after it
  // The next trial numbers past it.
  EXPECT_EQ(write_trial(storage, "r1", 1), kTarget + "/step-000002");
}

TEST(StepStore, OnlySoundCcbenchManifestsAreStepsAndTheNewestIsTheRestartStep) {
  MemoryStorage storage({"mem", kTarget});
  write_trial(storage, "r1", 1);               // step 1
  write_trial(storage, "r1", 1);               // step 2
  storage.make_dir(kTarget + "/step-000003");  // no manifest: not a step
  storage.make_dir(kTarget + "/step-000004");
  put(storage, kTarget + "/step-000004/" + kManifestName, "{}");  // a user's: not ccbench's, not listed
  storage.make_dir(kTarget + "/step-000005");
  put(storage, kTarget + "/step-000005/" + kManifestName, "not json");
  storage.make_dir(kTarget + "/step-0000060");  // seven digits: not a step name
  put(storage, kTarget + "/step-0000060/" + kManifestName, manifest_text(60, "r1", 1));
  storage.make_dir(kTarget + "/step-000007");
  put(storage, kTarget + "/step-000007/" + kManifestName, manifest_text(8, "r1", 1));

  const auto steps = scan_steps(storage, kTarget);
  ASSERT_EQ(steps.size(), 4U);
  EXPECT_EQ(steps[0].step, 1);
  EXPECT_EQ(steps[1].step, 2);
  EXPECT_EQ(steps[1].path, kTarget + "/step-000002");
  ASSERT_TRUE(steps[1].manifest);
  EXPECT_EQ(steps[1].manifest->run, "r1");
  EXPECT_EQ(steps[1].manifest->files, std::vector<std::string>{"rank-00000.shard"});
  EXPECT_EQ(steps[2].step, 5);
  EXPECT_FALSE(steps[2].manifest);
  EXPECT_EQ(steps[2].problem.rfind("mem/ckpt/step-000005/ccbench-manifest.json: not JSON", 0), 0U) << steps[2].problem;
  EXPECT_EQ(steps[3].problem,
            "mem/ckpt/step-000007/ccbench-manifest.json: field 'step': 8, but the folder is step-000007");
  const auto committed = committed_steps(storage, kTarget);
  ASSERT_EQ(committed.size(), 2U);
  EXPECT_EQ(committed.back().path, kTarget + "/step-000002");
  // The restart step: the newest with a ccbench manifest (a newer user's folder is passed over),
  // here one whose manifest names another step, which --phases read reports.
  storage.make_dir(kTarget + "/step-000009");
  put(storage, kTarget + "/step-000009/" + kManifestName, R"({"tool": "torch.save"})");
  const auto newest = newest_step(storage, kTarget);
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->path, kTarget + "/step-000007");
  EXPECT_EQ(newest->problem, steps[3].problem);
  EXPECT_FALSE(newest_step(storage, "mem").has_value());  // no step at all
}

TEST(StepStore, KeepRemovesTheOldestAndOnlyTheListedFiles) {
  MemoryStorage storage({"mem", kTarget});
  for (int i = 0; i < 4; ++i) write_trial(storage, "r1", 2);
  put(storage, kTarget + "/step-000002/notes.txt", "a user's");  // inside a step: it stays, with its step
  storage.make_dir(kTarget + "/mine");
  put(storage, kTarget + "/mine/file", "a user's");

  const auto over = steps_over_keep(storage, kTarget, 2);
  ASSERT_EQ(over.size(), 2U);
  EXPECT_EQ(over[0].step, 1);
  EXPECT_EQ(over[1].step, 2);
  const Removal done = remove_steps(storage, over);
  EXPECT_EQ(done.removed, std::vector<std::string>{"step-000001"});
  EXPECT_EQ(done.kept,
            std::vector<std::string>{"kept mem/ckpt/step-000002: it holds files its manifest does not list"});
  const std::vector<std::string> expect = {"mem/",
                                           "mem/ckpt/",
                                           "mem/ckpt/mine/",
                                           "mem/ckpt/mine/file",
                                           "mem/ckpt/step-000002/",
                                           "mem/ckpt/step-000002/notes.txt",
                                           "mem/ckpt/step-000003/",
                                           "mem/ckpt/step-000003/ccbench-manifest.json",
                                           "mem/ckpt/step-000003/rank-00000.shard",
                                           "mem/ckpt/step-000003/rank-00001.shard",
                                           "mem/ckpt/step-000004/",
                                           "mem/ckpt/step-000004/ccbench-manifest.json",
                                           "mem/ckpt/step-000004/rank-00000.shard",
                                           "mem/ckpt/step-000004/rank-00001.shard"};
  EXPECT_EQ(storage.paths(), expect);
  // step-000002 lost its manifest first: it is no step any more, so the next --keep passes it by.
  EXPECT_TRUE(steps_over_keep(storage, kTarget, 2).empty());
  EXPECT_TRUE(steps_over_keep(storage, kTarget, 0).empty());  // --keep 0: none here (the run's end does it)
}

TEST(StepStore, ARunsEndRemovesItsOwnCommittedStepsAndNothingOfAnotherRun) {
  MemoryStorage storage({"mem", kTarget});
  const std::string earlier = write_trial(storage, "r0", 1);  // another run's step
  std::vector<std::string> written;
  written.push_back(write_trial(storage, "r1", 1));
  written.push_back(write_trial(storage, "r1", 1));
  written.push_back(earlier);  // listed as written by mistake: its manifest names r0, so it stays
  written.push_back(write_trial(storage, "r1", 1));
  storage.remove_tree(written.back() + "/" + kManifestName);  // this run's, its manifest now unreadable
  put(storage, written.back() + "/" + kManifestName, "{broken");
  std::vector<std::string> unreadable;
  const auto own = own_steps(storage, kTarget, "r1", written, &unreadable);
  ASSERT_EQ(own.size(), 2U);
  ASSERT_EQ(unreadable.size(), 1U);
  EXPECT_EQ(unreadable[0].rfind("kept mem/ckpt/step-000004: mem/ckpt/step-000004/ccbench-manifest.json: not JSON", 0),
            0U)
      << unreadable[0];
  const Removal done = remove_steps(storage, own);
  EXPECT_EQ(done.removed, (std::vector<std::string>{"step-000002", "step-000003"}));
  EXPECT_TRUE(done.kept.empty());
  const auto left = committed_steps(storage, kTarget);
  ASSERT_EQ(left.size(), 1U);
  EXPECT_EQ(left[0].path, earlier);
  EXPECT_EQ(left[0].manifest.run, "r0");
  EXPECT_EQ(scan_steps(storage, kTarget).back().path, kTarget + "/step-000004");  // kept, as said
}

TEST(StepStore, TheMemoryEngineRefusesWhatItCannotDoNamingTheFlag) {
  MemoryStorage storage({"mem"});
  EXPECT_EQ(storage.refuses({.direct = true}), "--direct: not for the memory engine (no page cache to bypass)");
  EXPECT_EQ(storage.refuses({.export_to = true}), "--export-to: for a POSIX --target, not the memory engine's");
  EXPECT_EQ(storage.refuses({.shared_file = true, .fsync = false, .shard_bytes = 1ULL << 40}), "");
  EXPECT_EQ(storage.unusable("mem/none"), "does not exist");
  try {
    storage.open("mem/none/rank-00000.shard", OpenFor::create_write, {});
    FAIL() << "a file in a missing folder";
  } catch (const StorageError& e) {
    EXPECT_EQ(e.errno_name(), "ENOENT");
  }
  put(storage, "mem/a", "x");
  EXPECT_THROW(storage.open("mem/a", OpenFor::create_write, {}), StorageError);  // O_EXCL, as POSIX's
  // The memory engine is for tests: no target names it.
  EXPECT_THROW(open_storage("memory://x"), UsageError);
}

}  // namespace
}  // namespace ccbench::checkpoint
