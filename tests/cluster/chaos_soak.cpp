#include "chaos_soak.h"

#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include "child_process.h"
#include "etcd_server.h"
#include "metrics_file.h"
#include "rehearsal_cluster.h"
#include "strata/util/random.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kNodes = 3;     // training nodes; under etcd, node kNodes runs etcd
constexpr int kPort = 29611;  // each node has its own network namespace: no clash
constexpr std::chrono::seconds kRecoveryLimit{150};
constexpr const char* kRestartLine = "restarting all workers";
// Part of the line a launcher prints as it starts its workers in a round.
constexpr const char* kRoundStartLine = ", rendezvous at ";

RehearsalOptions rehearsalOf(const SoakOptions& o) {
  RehearsalOptions options;
  options.nodes = o.etcd ? kNodes + 1 : kNodes;
  return options;
}

// Where each launcher's output stood at a moment: a fault's start.
using OutputMarks = std::map<const ChildProcess*, size_t>;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<std::string> trainCommand(const SoakOptions& o, const std::string& dir, int steps,
                                      bool elastic) {
  std::vector<std::string> command = {
      o.strataBinary,   "train",  "--layers",       "2",
      "--hidden",       "64",     "--heads",        "2",
      "--ffn",          "128",    "--context",      "32",
      "--seq-len",      "32",     "--global-batch", "12",
      "--micro-batch",  "2",      "--steps",        std::to_string(steps),
      "--log-every",    "1",      "--eval-every",   "0",
      "--corpus-bytes", "100000", "--warmup-steps", "2",
      "--dp",           "3",      "--out-dir",      dir + "/out"};
  if (elastic) {
    command.insert(command.end(),
                   {"--elastic-policy", "dp", "--resume", "--checkpoint-dir", dir + "/checkpoints",
                    "--checkpoint-every", std::to_string(o.checkpointEvery),
                    // the newest three: the tmpfs holds them however long the soak
                    "--keep-checkpoints", "3"});
  }
  return command;
}

// The highest step rank 0 logged in `text` from `from` on; 0 when none.
int lastStep(const std::string& text, size_t from) {
  static const std::regex step(R"(\[rank 0\] step (\d+)/)");
  int last = 0;
  auto begin =
      std::sregex_iterator(text.begin() + static_cast<std::ptrdiff_t>(from), text.end(), step);
  for (auto it = begin; it != std::sregex_iterator(); ++it)
    last = std::max(last, std::stoi((*it)[1]));
  return last;
}

// The round of the last start a launcher printed ("..., round 3"; none: 0).
int lastRound(const std::string& output) {
  static const std::regex start(R"(rendezvous at [^\n]*?(, round (\d+))?\n)");
  int round = -1;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), start);
       it != std::sregex_iterator(); ++it)
    round = (*it)[2].matched ? std::stoi((*it)[2]) : 0;
  return round;
}

std::string commandLineOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

pid_t parentOf(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string state;
  pid_t parent = -1;
  rest >> state >> parent;
  return parent;
}

std::vector<pid_t> processesMentioning(const std::string& part) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = std::stoi(name);
    if (pid == getpid()) continue;
    if (commandLineOf(pid).find(part) != std::string::npos) found.push_back(pid);
  }
  return found;
}

// The training worker a launcher runs now (its child running `strata
// train`; the orphan guard, a fork of the launcher, runs `strata launch`).
pid_t workerOf(pid_t launcher, const std::string& strata) {
  for (pid_t pid : processesMentioning(strata + " train ")) {
    if (parentOf(pid) == launcher && commandLineOf(pid).rfind(strata + " train ", 0) == 0)
      return pid;
  }
  return -1;
}

class Soak {
 public:
  Soak(const SoakOptions& o, SoakReport& report)
      : o_(o), report_(report), cluster_(rehearsalOf(o)) {
    dir_ = (fs::temp_directory_path() / ("strata-soak-" + std::to_string(getpid()))).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/checkpoints");
    std::string mount = "mount -t tmpfs -o size=64m strata-soak " + dir_ + "/checkpoints";
    mounted_ = std::system(mount.c_str()) == 0;
    // Each fault comes stepsBetweenFaults after the furthest step reached,
    // and the soak sees steps a poll late: this tiny job trains tens of steps
    // a second, so faults land 12 to 16 steps apart (measured). Enough
    // steps that the last fault still finds the job training, and no more:
    // the losses of a run whose layout moved between dp 3 and dp 2 drift
    // from the uninterrupted run's as training goes on (one soak of 304
    // steps reached 1.4e-5 relative at step 245).
    steps_ = 16 + static_cast<int>(o.faults.size()) * (o.stepsBetweenFaults + 12);
  }
  ~Soak() {
    for (auto& node : nodes_) node.reset();
    for (pid_t pid : processesMentioning(dir_)) kill(pid, SIGKILL);
    if (mounted_) std::system(("umount " + dir_ + "/checkpoints").c_str());
    fs::remove_all(dir_);
  }

  void run() {
    report_.uninterrupted = uninterrupted();
    if (o_.etcd) {
      etcd_ = std::make_unique<EtcdServer>(
          EtcdPlace{cluster_.commandPrefix(kNodes), cluster_.address(kNodes)});
      note("etcd runs on node " + std::to_string(kNodes) + " at " + etcd_->endpoint());
    }
    for (int node = 0; node < kNodes; ++node) startNode(node);
    for (const Fault& fault : o_.faults) {
      if (!awaitSteps(lastLogged() + o_.stepsBetweenFaults)) return;
      inject(fault);
    }
    finish();
  }

 private:
  void note(const std::string& line) { report_.log += line + "\n"; }

  std::vector<double> uninterrupted() {
    SpawnSpec spec;
    spec.argv = {o_.strataBinary, "launch", "--nproc-per-node", "3", "--timeout", "60", "--"};
    std::vector<std::string> train = trainCommand(o_, dir_ + "/reference", steps_, false);
    spec.argv.insert(spec.argv.end(), train.begin(), train.end());
    ChildProcess job(spec);
    std::optional<ExitStatus> status = job.waitForExit(after(std::chrono::seconds(300)));
    if (!status || !status->success()) note("the uninterrupted run failed:\n" + job.output());
    return lossesInMetrics(dir_ + "/reference/out/metrics.jsonl");
  }

  void startNode(int node) {
    SpawnSpec spec;
    spec.argv = cluster_.commandPrefix(node);
    std::vector<std::string> launch = {
        o_.strataBinary, "launch", "--nproc-per-node", "1",
        "--nnodes",      "2:3",    "--node-rank",      std::to_string(node)};
    spec.argv.insert(spec.argv.end(), launch.begin(), launch.end());
    std::vector<std::string> rendezvous = {"--master-addr", cluster_.address(0), "--master-port",
                                           std::to_string(kPort)};
    if (o_.etcd)
      rendezvous = {"--rdzv-backend",  "etcd",      "--rdzv-endpoint",
                    etcd_->endpoint(), "--rdzv-id", "soak"};
    spec.argv.insert(spec.argv.end(), rendezvous.begin(), rendezvous.end());
    std::vector<std::string> restarts = {"--max-restarts", "100",         "--join-wait", "2",
                                         "--timeout",      timeoutText(), "--"};
    spec.argv.insert(spec.argv.end(), restarts.begin(), restarts.end());
    std::vector<std::string> train = trainCommand(o_, dir_, steps_, true);
    spec.argv.insert(spec.argv.end(), train.begin(), train.end());
    if (nodes_.size() <= static_cast<size_t>(node)) nodes_.resize(node + 1);
    if (nodes_[node]) retired_.push_back(std::move(nodes_[node]));
    nodes_[node] = std::make_unique<ChildProcess>(spec);
    note("started node " + std::to_string(node) + "'s launcher, pid " +
         std::to_string(nodes_[node]->pid()));
  }

  std::string timeoutText() const {
    std::ostringstream text;
    text << o_.timeoutSeconds;
    return text.str();
  }

  // Node 0 serves the store under c10d: the job ends with its launcher.
  bool servesTheStore(int node) const { return !o_.etcd && node == 0; }

  // Reads what every launcher printed; restarts a node whose launcher exited
  // (a replacement node; a launcher that lost the store for longer than
  // --timeout, during a cut link, exits too) while the job has steps left to
  // train. False when the launcher serving the store (c10d's node 0) exited.
  bool pump() {
    for (auto& old : retired_) old->waitForExit(Clock::now());
    for (int node = 0; node < kNodes; ++node) {
      std::optional<ExitStatus> status = nodes_[node]->waitForExit(Clock::now());
      if (!status) continue;
      if (servesTheStore(node)) {
        note("node 0's launcher exited with " + status->describe());
        return false;
      }
      if (lastLogged() >= steps_) continue;  // the job ends: its launchers exit
      note("node " + std::to_string(node) + "'s launcher exited with " + status->describe() +
           "; a replacement starts");
      startNode(node);
    }
    return true;
  }

  // Every launcher of the soak, the replaced ones too.
  std::vector<const ChildProcess*> launchers() const {
    std::vector<const ChildProcess*> all;
    for (const auto& old : retired_) all.push_back(old.get());
    for (const auto& node : nodes_) all.push_back(node.get());
    return all;
  }

  OutputMarks marks() const {
    OutputMarks at;
    for (const ChildProcess* launcher : launchers()) at[launcher] = launcher->output().size();
    return at;
  }

  // Where `launcher` started its workers in a round after `marks` (a
  // restart, or a round it joined after waiting outside the last one); npos
  // when it has not. A launcher started after the marks (a replacement) runs
  // only new rounds.
  static size_t newRoundIn(const ChildProcess* launcher, const OutputMarks& marks) {
    auto mark = marks.find(launcher);
    if (mark == marks.end()) return 0;
    return launcher->output().find(kRoundStartLine, mark->second);
  }

  // The highest step rank 0 logged, wherever it ran: with `since`, only
  // lines a launcher printed in a round it started after those marks.
  int lastLogged(const OutputMarks* since = nullptr) const {
    int last = 0;
    for (const ChildProcess* launcher : launchers()) {
      size_t from = since ? newRoundIn(launcher, *since) : 0;
      if (from != std::string::npos) last = std::max(last, lastStep(launcher->output(), from));
    }
    return last;
  }

  // The end of what node `node`'s launcher printed (with the failed workers'
  // last stderr lines it quotes), without the workers' own lines.
  std::string tailOf(int node) const {
    std::istringstream lines(nodes_[node]->output());
    std::vector<std::string> kept;
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("[rank", 0) != 0) kept.push_back(line);
    std::string text = "node " + std::to_string(node) + "'s launcher, last lines:";
    for (size_t i = kept.size() > 40 ? kept.size() - 40 : 0; i < kept.size(); ++i)
      text += "\n  " + kept[i];
    return text;
  }

  // Waits until rank 0 has logged `step` (with `since`: after a restart).
  bool awaitSteps(int step, const OutputMarks* since = nullptr) {
    Deadline deadline = after(kRecoveryLimit);
    while (lastLogged(since) < step) {
      if (!pump()) {
        note("node 0's launcher ended before step " + std::to_string(step) + ":\n" +
             nodes_[0]->output());
        return false;
      }
      if (Clock::now() > deadline) {
        note("the job did not reach step " + std::to_string(step) + " in " +
             std::to_string(kRecoveryLimit.count()) + " s");
        for (int node = 0; node < kNodes; ++node) note(tailOf(node));
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return true;
  }

  bool hasWorker(int node) const { return workerOf(nodes_[node]->pid(), o_.strataBinary) > 0; }

  // The node the fault hits: `wanted` when it runs a worker now (a
  // replacement waiting for the next round runs none), else another that
  // does, node 0 only where the fault may hit it.
  int targetOf(const Fault& fault) const {
    bool sparesNodeZero =
        !o_.etcd && (fault.kind == FaultKind::kKillNode || fault.kind == FaultKind::kCutLink);
    if (hasWorker(fault.node)) return fault.node;
    for (int node = kNodes - 1; node >= (sparesNodeZero ? 1 : 0); --node)
      if (hasWorker(node)) return node;
    return fault.node;
  }

  void inject(Fault fault) {
    int step = lastLogged();
    OutputMarks before = marks();
    auto start = Clock::now();
    if (fault.kind != FaultKind::kFillDisk) fault.node = targetOf(fault);
    note(std::string(faultName(fault.kind)) + " on node " + std::to_string(fault.node) +
         " at step " + std::to_string(step));
    pid_t worker = workerOf(nodes_[fault.node]->pid(), o_.strataBinary);
    switch (fault.kind) {
      case FaultKind::kKillWorker:
        if (worker > 0) kill(worker, SIGKILL);  // never kill(-1): that is every process
        break;
      case FaultKind::kKillNode:
        kill(nodes_[fault.node]->pid(), SIGKILL);
        break;
      case FaultKind::kStopWorker:
        if (worker > 0) kill(worker, SIGSTOP);
        break;
      case FaultKind::kFillDisk:
        if (!mounted_) note("fill-disk: no tmpfs could be mounted");
        fillDisk();
        break;
      case FaultKind::kCutLink:
        cluster_.setLinkUp(fault.node, false);
        break;
    }
    // Every fault fails the round: the job restarts, resumes from its latest
    // checkpoint and trains past the step it had reached.
    bool fill = fault.kind == FaultKind::kFillDisk;
    bool restarted = awaitRestart(before, fill ? [this] { fillDisk(); } : std::function<void()>());
    if (fill) freeDisk();
    if (fault.kind == FaultKind::kCutLink) {
      waitWhilePumping(std::max(0.0, o_.timeoutSeconds + 3 - secondsSince(start)));
      cluster_.setLinkUp(fault.node, true);
    }
    bool recovered = restarted && awaitSteps(step + 1, &before);
    report_.faults.push_back({fault, step, recovered ? secondsSince(start) : -1});
  }

  bool restartedSince(const OutputMarks& before) const {
    for (const auto& [launcher, offset] : before)
      if (launcher->output().find(kRestartLine, offset) != std::string::npos) return true;
    return false;
  }

  // Until a launcher that ran before the fault says it restarts the workers;
  // `meanwhile` runs at every poll. False when none did.
  bool awaitRestart(const OutputMarks& before, const std::function<void()>& meanwhile) {
    Deadline deadline = after(kRecoveryLimit);
    while (!restartedSince(before) && Clock::now() < deadline && pump()) {
      if (meanwhile) meanwhile();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    bool restarted = restartedSince(before);
    if (!restarted) note("no launcher restarted the workers after the fault");
    return restarted;
  }

  void waitWhilePumping(double seconds) {
    auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end && pump())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // Leaves less room than a checkpoint needs, so the next save fails. Called
  // again while the soak waits for that failure: pruning old checkpoints
  // frees room that must be taken up too.
  void fillDisk() {
    if (!mounted_) return;
    struct statvfs disk {};
    statvfs((dir_ + "/checkpoints").c_str(), &disk);
    uint64_t free = static_cast<uint64_t>(disk.f_bavail) * disk.f_frsize;
    constexpr uint64_t kKeep = 64 * 1024;
    if (free <= 2 * kKeep) return;
    std::ofstream out(dir_ + "/checkpoints/filler-" + std::to_string(fillers_++), std::ios::binary);
    std::string block(1 << 20, 'x');
    for (uint64_t written = 0; written + kKeep < free;) {
      uint64_t n = std::min<uint64_t>(block.size(), free - kKeep - written);
      out.write(block.data(), static_cast<std::streamsize>(n));
      written += n;
    }
  }

  void freeDisk() {
    for (int i = 0; i < fillers_; ++i)
      fs::remove(dir_ + "/checkpoints/filler-" + std::to_string(i));
    fillers_ = 0;
  }

  bool allExited() const {
    for (const auto& node : nodes_)
      if (!node->waitForExit(Clock::now())) return false;
    return true;
  }

  void finish() {
    Deadline deadline = after(kRecoveryLimit);
    while (!allExited() && pump() && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // The launchers of the job's last round must end well (c10d's node 0
    // serves every round); one that lost the store during a fault and exited
    // outside that round was its casualty.
    int round = 0;
    for (const auto& node : nodes_) round = std::max(round, lastRound(node->output()));
    int succeeded = 0;
    report_.finished = true;
    for (int node = 0; node < kNodes; ++node) {
      std::optional<ExitStatus> other = nodes_[node]->waitForExit(deadline);
      bool inLastRound = lastRound(nodes_[node]->output()) == round;
      if (other && other->success()) {
        ++succeeded;
        continue;
      }
      if (other && !inLastRound && !servesTheStore(node)) {
        note("node " + std::to_string(node) + "'s launcher exited with " + other->describe() +
             " outside the last round (a fault's casualty)");
        continue;
      }
      report_.finished = false;
      note("node " + std::to_string(node) +
           "'s last launcher: " + (other ? other->describe() : std::string("still running")) +
           "\n" + nodes_[node]->output());
    }
    if (succeeded == 0) report_.finished = false;
    for (auto& old : retired_) old->waitForExit(deadline);
    // Workers die with their launchers; give the kernel a moment to reap.
    Deadline reaped = after(std::chrono::seconds(10));
    while (!processesMentioning(dir_).empty() && Clock::now() < reaped)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    report_.leftOver = processesMentioning(dir_);
    report_.losses = lossesInMetrics(dir_ + "/out/metrics.jsonl");
    compareLosses();
    std::string output;
    std::optional<ExitStatus> verified =
        runToEnd({o_.strataBinary, "checkpoint", "inspect", "--verify", dir_ + "/checkpoints"},
                 after(std::chrono::seconds(60)), &output);
    report_.checkpointVerified = verified && verified->success();
    if (!report_.checkpointVerified) note("checkpoint inspect --verify:\n" + output);
  }

  void compareLosses() {
    size_t n = std::min(report_.losses.size(), report_.uninterrupted.size());
    for (size_t i = 0; i < n; ++i) {
      double expected = report_.uninterrupted[i];
      double relative = std::abs(report_.losses[i] - expected) / std::abs(expected);
      if (relative > report_.largestRelativeDifference) {
        report_.largestRelativeDifference = relative;
        report_.largestDifferenceStep = static_cast<int>(i) + 1;
      }
    }
  }

  const SoakOptions& o_;
  SoakReport& report_;
  RehearsalCluster cluster_;
  std::string dir_;
  bool mounted_ = false;
  int fillers_ = 0;
  int steps_ = 0;
  std::vector<std::unique_ptr<ChildProcess>> nodes_, retired_;
  std::unique_ptr<EtcdServer> etcd_;
};

}  // namespace

const char* faultName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kKillWorker:
      return "kill-worker";
    case FaultKind::kKillNode:
      return "kill-node";
    case FaultKind::kStopWorker:
      return "stop-worker";
    case FaultKind::kFillDisk:
      return "fill-disk";
    case FaultKind::kCutLink:
      return "cut-link";
  }
  return "unknown fault";
}

std::vector<Fault> faultPlan(int count, uint64_t seed, bool nodeZeroMayFail) {
  const FaultKind kinds[] = {FaultKind::kKillWorker, FaultKind::kKillNode, FaultKind::kStopWorker,
                             FaultKind::kFillDisk, FaultKind::kCutLink};
  util::SplitMix64 random(seed);
  std::vector<Fault> plan;
  while (static_cast<int>(plan.size()) < count) {
    std::vector<int64_t> order = util::permutation(5, random.next());
    for (int64_t k : order) {
      if (static_cast<int>(plan.size()) == count) break;
      FaultKind kind = kinds[k];
      bool sparesNodeZero =
          !nodeZeroMayFail && (kind == FaultKind::kKillNode || kind == FaultKind::kCutLink);
      int node = sparesNodeZero ? 1 + static_cast<int>(random.below(kNodes - 1))
                                : static_cast<int>(random.below(kNodes));
      plan.push_back({kind, node});
    }
  }
  return plan;
}

std::string SoakReport::summary() const {
  std::ostringstream out;
  out.precision(3);
  for (const FaultOutcome& f : faults) {
    out << faultName(f.fault.kind) << " on node " << f.fault.node << " at step " << f.stepAtFault
        << ": ";
    if (f.secondsLost < 0)
      out << "not recovered\n";
    else
      out << "trained past it again after " << f.secondsLost << " s\n";
  }
  out << "finished: " << (finished ? "yes" : "no") << "; steps " << losses.size() << " of "
      << uninterrupted.size() << "; largest loss difference " << largestRelativeDifference
      << " relative (step " << largestDifferenceStep << "); processes left: " << leftOver.size()
      << "; latest checkpoint verified: " << (checkpointVerified ? "yes" : "no") << "\n";
  return out.str();
}

SoakReport runChaosSoak(const SoakOptions& options) {
  SoakReport report;
  std::string why = RehearsalCluster::unavailableReason();
  if (!why.empty()) {
    report.log = "no rehearsal here: " + why;
    return report;
  }
  try {
    Soak soak(options, report);
    soak.run();
  } catch (const std::exception& e) {  // the rehearsal or etcd could not be set up
    report.log += std::string("the soak could not run: ") + e.what() + "\n";
  }
  return report;
}

}  // namespace strata::testing
