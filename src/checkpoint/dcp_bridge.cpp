#include "checkpoint/dcp_bridge.h"

#include <fcntl.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "strata/error.h"
#include "strata/util/subprocess.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

// A folder of its own under the system's temporary one, removed when done.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "strata-dcp-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw CheckpointError("cannot create a temporary folder under " +
                            fs::temp_directory_path().string());
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The last `count` non-empty lines of `text`.
std::string lastLines(const std::string& text, size_t count) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::string kept;
  for (size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    kept += (kept.empty() ? "" : "\n") + lines[i];
  return kept;
}

// Runs the bridge with `args`; its output goes to a file, read back when it
// fails. Blocks until the child exits.
void runBridge(const ScratchFolder& scratch, const std::string& python,
               const std::vector<std::string>& args) {
  std::string script = scratch.file("dcp_bridge.py");
  std::ofstream(script) << kDcpBridgeScript;
  std::string log = scratch.file("bridge.log");
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) throw CheckpointError("cannot create " + log);
  SpawnSpec spec;
  spec.argv = {python, "-B", script};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.stdoutFd = spec.stderrFd = fd;
  spec.newProcessGroup = false;
  ExitStatus status = waitExit(spawnProcess(spec));
  ::close(fd);
  if (status.success()) return;
  std::string output = readText(log);
  if (status.code == 127)
    throw CheckpointError("cannot run '" + python +
                          "' for torch.distributed.checkpoint: give a Python with PyTorch by "
                          "--python or STRATA_PYTHON");
  if (status.code == 2) throw CheckpointError("DCP: " + lastLines(output, 1));
  throw CheckpointError("torch.distributed.checkpoint through '" + python + "' failed (" +
                        status.describe() + "):\n" + lastLines(output, 12));
}

}  // namespace

std::string dcpPython(const std::string& given) {
  if (!given.empty()) return given;
  const char* variable = std::getenv("STRATA_PYTHON");
  return variable && *variable ? variable : "python3";
}

FlatDcpState readDcp(const std::string& directory, const std::string& python) {
  ScratchFolder scratch;
  std::string flat = scratch.file("flat.pt");
  runBridge(scratch, python, {"read", directory, flat});
  std::string bytes = readText(flat);
  c10::IValue loaded = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  FlatDcpState state;
  for (const auto& entry : loaded.toGenericDict())
    state[entry.key().toStringRef()] = entry.value().toTensor();
  return state;
}

void writeDcp(const FlatDcpState& state, const std::string& directory, const std::string& python) {
  ScratchFolder scratch;
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [key, tensor] : state) dict.insert(key, tensor.contiguous());
  std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  std::string flat = scratch.file("flat.pt");
  std::ofstream(flat, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  runBridge(scratch, python, {"write", flat, directory});
}

}  // namespace strata::train
