// The run report as a person sees it: a short real training run through the
// real command line (`strata launch --nproc-per-node 2 -- strata train --pp 2`),
// then its report.html opened in headless Chromium twice:
//
//   --dump-dom    the page after its script ran: every curve is an SVG path
//                 with one point per logged step, the timelines, the layout
//                 map and the configuration are there;
//   --screenshot  the pixels: many colours, the loss curve's among them.
//
// Both runs log the page's console to stderr (--enable-logging=stderr, lines
// tagged ":CONSOLE"); the page logs nothing, so any such line (an uncaught
// exception, a syntax error) fails the test. So that a Chromium that stops
// logging cannot pass this silently, the DOM run opens a copy of the page with
// one extra script that logs a canary, and the canary must show up.
//
// Skipped when Chromium is not installed (scripts/setup.sh installs it).
// Chromium's start-up on a loaded machine can take tens of seconds, hence the
// generous limits; a browser or job still running at its limit is killed and
// fails the test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "child_process.h"
#include "png_pixels.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using strata::testing::after;
using strata::testing::Deadline;

constexpr std::chrono::seconds kTrainLimit{240};
constexpr std::chrono::seconds kBrowserLimit{150};
constexpr int kPipelineStages = 2;
constexpr int kMicroBatches = 4;  // global batch 8 / micro-batch 2
constexpr char kCanary[] = "strata-report-canary";
constexpr uint32_t kLossColour = 0x1f77b4;  // the train-loss series in report.html

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::optional<std::string> chromiumOnPath() {
  std::istringstream path(getenv("PATH") ? getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      fs::path candidate = fs::path(dir) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return std::nullopt;
}

// A GPT of 4 blocks of width 32 on 2 workers as a pipeline of 2 stages,
// logging (and so reporting) every 2 steps, evaluating every 4.
constexpr char kTrainFlags[] =
    "--layers 4 --hidden 32 --heads 4 --ffn 64 --vocab 256 --context 16 --seq-len 16 "
    "--global-batch 8 --micro-batch 2 --steps 8 --warmup-steps 1 --log-every 2 --eval-every 4 "
    "--eval-batches 1 --corpus-bytes 20000 --pp 2";

std::vector<std::string> trainCommand(const fs::path& runDir) {
  std::vector<std::string> argv = {STRATA_BINARY, "launch", "--nproc-per-node", "2",    "--timeout",
                                   "120",         "--",     STRATA_BINARY,      "train"};
  std::istringstream flags(kTrainFlags);
  for (std::string word; flags >> word;) argv.push_back(word);
  argv.insert(argv.end(), {"--out-dir", runDir.string()});
  return argv;
}

struct BrowserRun {
  bool finished = false;
  std::string out;  // stdout: the DOM or nothing
  std::string log;  // stderr: Chromium's log, the page's console among it
};

// Chromium on `page` with its own profile in `workDir`, so parallel runs on a
// shared machine never meet; stdout and stderr go to files, read at the end.
BrowserRun runChromium(const std::string& chromium, const std::vector<std::string>& mode,
                       const fs::path& page, const fs::path& workDir) {
  fs::path outPath = workDir / "chromium.out", logPath = workDir / "chromium.log";
  SpawnSpec spec;
  spec.argv = {chromium,
               "--headless",
               "--no-sandbox",
               "--disable-gpu",
               "--disable-dev-shm-usage",
               "--force-color-profile=srgb",
               "--user-data-dir=" + (workDir / "profile").string(),
               "--enable-logging=stderr",
               "--v=0"};
  spec.argv.insert(spec.argv.end(), mode.begin(), mode.end());
  spec.argv.push_back("file://" + page.string());
  spec.stdoutFd = open(outPath.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  spec.stderrFd = open(logPath.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  pid_t pid = spawnProcess(spec);
  close(spec.stdoutFd);
  close(spec.stderrFd);
  Deadline deadline = after(kBrowserLimit);
  BrowserRun run;
  while (!(run.finished = pollExit(pid).has_value()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!run.finished) {
    kill(-pid, SIGKILL);  // the whole group: Chromium's renderer and GPU processes too
    waitExit(pid);
  }
  run.out = readFile(outPath);
  run.log = readFile(logPath);
  return run;
}

// The lines of Chromium's log that carry the page's console output.
std::vector<std::string> consoleLines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find(":CONSOLE") != std::string::npos) lines.push_back(line);
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// How many points the chart path of `series` draws: each is one M or L command.
int pointsOfSeries(const std::string& dom, const std::string& series) {
  std::smatch match;
  std::regex path("<path class=\"series series-" + series + "\"[^>]* d=\"([^\"]*)\"");
  if (!std::regex_search(dom, match, path)) return -1;
  std::string d = match[1];
  return static_cast<int>(std::count(d.begin(), d.end(), 'M') +
                          std::count(d.begin(), d.end(), 'L'));
}

// How many values of `key` metrics.jsonl holds that are not null.
int measuredValues(const fs::path& metricsPath, const std::string& key) {
  std::istringstream lines(readFile(metricsPath));
  int count = 0;
  for (std::string line; std::getline(lines, line);)
    count += nlohmann::json::parse(line).at(key).is_number();
  return count;
}

// The timeline box `id` (measured or simulated): its blocks, one per action.
int timelineBlocks(const std::string& dom, const std::string& id) {
  size_t begin = dom.find("id=\"timeline-" + id + "\"");
  if (begin == std::string::npos) return -1;
  size_t end = dom.find("</svg>", begin);
  std::string svg = dom.substr(begin, end - begin);
  return strata::testing::countOf(svg, "class=\"action\"");
}

// The page after its script ran, opened with the canary script added.
void checkPageContent(const std::string& chromium, const fs::path& workDir) {
  fs::path run = workDir / "run";
  std::string page = readFile(run / "report.html");
  size_t bodyEnd = page.rfind("</body>");
  ASSERT_NE(bodyEnd, std::string::npos);
  page.insert(bodyEnd, std::string("<script>console.log('") + kCanary + "')</script>");
  fs::path withCanary = workDir / "report-with-canary.html";
  std::ofstream(withCanary) << page;

  BrowserRun browser = runChromium(chromium, {"--dump-dom"}, withCanary, workDir);
  ASSERT_TRUE(browser.finished) << "chromium still ran after " << kBrowserLimit.count() << " s";
  std::vector<std::string> console = consoleLines(browser.log);
  ASSERT_EQ(console.size(), 1u) << "the page's console:\n" << joined(console);
  EXPECT_NE(console[0].find(kCanary), std::string::npos) << console[0];

  const std::string& dom = browser.out;
  fs::path metrics = run / "metrics.jsonl";
  for (const char* series : {"loss", "val_loss", "lr", "grad_norm", "tokens_per_s", "mfu",
                             "peak_memory_bytes", "bubble"}) {
    EXPECT_EQ(pointsOfSeries(dom, series), measuredValues(metrics, series)) << series;
  }
  // 1F1B: a forward and a backward of every micro-batch on every stage.
  EXPECT_EQ(timelineBlocks(dom, "simulated"), 2 * kPipelineStages * kMicroBatches);
  EXPECT_GE(timelineBlocks(dom, "measured"), 2 * kPipelineStages * kMicroBatches);
  for (const char* part : {"rank 0 · tp 0", "rank 1 · tp 0", "stage 0: layers", "stage 1: layers",
                           "finished:", "pp = 2"}) {
    EXPECT_NE(dom.find(part), std::string::npos) << "no '" << part << "' in the page";
  }
}

void checkScreenshot(const std::string& chromium, const fs::path& workDir) {
  fs::path shot = workDir / "report.png";
  BrowserRun browser = runChromium(
      chromium, {"--screenshot=" + shot.string(), "--window-size=1200,2000", "--hide-scrollbars"},
      workDir / "run" / "report.html", workDir);
  ASSERT_TRUE(browser.finished) << "chromium still ran after " << kBrowserLimit.count() << " s";
  EXPECT_TRUE(consoleLines(browser.log).empty()) << joined(consoleLines(browser.log));
  ASSERT_TRUE(fs::exists(shot)) << browser.log;
  strata::testing::RgbImage image = strata::testing::decodePng(readFile(shot));
  EXPECT_EQ(image.width, 1200);
  // Text, axes, seven charts in their own colours: a blank or failed page has a handful.
  EXPECT_GT(image.distinctColours(), 50u);
  // More than its legend swatch (18 x 2 pixels): the curve itself is drawn.
  EXPECT_GT(image.pixelsOf(kLossColour), 100u);
}

TEST(RunReportInBrowser, DrawsTheRunWithoutConsoleErrors) {
  std::optional<std::string> chromium = chromiumOnPath();
  if (!chromium) {
    GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it), so the run "
                    "report is not checked in a browser";
  }
  fs::path workDir = fs::temp_directory_path() / ("strata_report_" + std::to_string(getpid()));
  fs::remove_all(workDir);
  fs::create_directories(workDir);
  std::string output;
  std::optional<ExitStatus> exit =
      strata::testing::runToEnd(trainCommand(workDir / "run"), after(kTrainLimit), &output);
  ASSERT_TRUE(exit && exit->success()) << output;

  checkPageContent(*chromium, workDir);
  checkScreenshot(*chromium, workDir);
  fs::remove_all(workDir);
}

}  // namespace
}  // namespace strata::train
