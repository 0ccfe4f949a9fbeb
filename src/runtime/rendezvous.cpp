#include "strata/runtime/rendezvous.h"

#include <algorithm>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "reach_endpoint.h"
#include "sha256.h"
#include "strata/error.h"

namespace strata {
namespace {

const char kFingerprintKey[] = "strata/token-fingerprint";

std::string fingerprintOf(const std::string& token) {
  return token.empty() ? "no-token" : sha256Hex("strata fingerprint\n" + token);
}

std::string jobPrefixOf(const std::string& token) {
  return "strata/job-" + sha256Hex("strata key prefix\n" + token).substr(0, 32);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), ::tolower);
  return text;
}

c10d::TCPStoreOptions storeOptions(int port, bool isServer, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = isServer;
  options.waitWorkers = false;
  options.timeout = timeout;
  return options;
}

void checkTokenFingerprint(c10d::Store& store, const std::string& token,
                           std::chrono::milliseconds timeout) {
  try {
    store.wait({kFingerprintKey}, timeout);
  } catch (const std::exception& e) {
    throw TimeoutError("the rendezvous store never published the job's token fingerprint within " +
                       describeDuration(timeout) + ": " + e.what());
  }
  std::vector<uint8_t> bytes = store.get(kFingerprintKey);
  if (std::string(bytes.begin(), bytes.end()) != fingerprintOf(token)) {
    throw ConfigError(
        token.empty()
            ? "refused by the job at this address: it requires a job token and this process "
              "has none (set STRATA_JOB_TOKEN or pass --job-token)"
            : "refused by the job at this address: this process's job token does not match the "
              "job's (check STRATA_JOB_TOKEN / --job-token)");
  }
}

}  // namespace

c10::intrusive_ptr<c10d::TCPStore> serveStore(const std::string& host, int port,
                                              const std::string& token,
                                              std::chrono::milliseconds timeout) {
  c10::intrusive_ptr<c10d::TCPStore> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(host, storeOptions(port, true, timeout));
  } catch (const std::exception& e) {
    std::string message = lower(e.what());
    if (message.find("address already in use") != std::string::npos ||
        message.find("eaddrinuse") != std::string::npos) {
      throw ConfigError("cannot serve the rendezvous store: port " + std::to_string(port) + " on " +
                        host +
                        " is already in use (another job?); choose another with --master-port "
                        "or pass --master-port 0 to pick a free one");
    }
    throw Error("cannot serve the rendezvous store at " + host + ":" + std::to_string(port) + ": " +
                e.what());
  }
  std::string fingerprint = fingerprintOf(token);
  store->set(kFingerprintKey, std::vector<uint8_t>(fingerprint.begin(), fingerprint.end()));
  return store;
}

c10::intrusive_ptr<c10d::TCPStore> connectStore(const std::string& host, int port,
                                                std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline = Clock::now() + timeout;
  waitUntilReachable(host, port, timeout, "the rendezvous store");
  auto left =
      std::max(std::chrono::milliseconds(1),
               std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
  try {
    return c10::make_intrusive<c10d::TCPStore>(host, storeOptions(port, false, left));
  } catch (const std::exception& e) {
    throw TimeoutError("could not connect to the rendezvous store at " + host + ":" +
                       std::to_string(port) + " within " + describeDuration(timeout) +
                       " (is node 0's launcher / rank 0 running?): " + e.what());
  }
}

c10::intrusive_ptr<c10d::Store> jobScope(const c10::intrusive_ptr<c10d::Store>& store,
                                         const std::string& token, const std::string& scope,
                                         std::chrono::milliseconds timeout) {
  checkTokenFingerprint(*store, token, timeout);
  return c10::make_intrusive<c10d::PrefixStore>(jobPrefixOf(token) + "/" + scope, store);
}

void publishFingerprintOnce(c10d::Store& store, const std::string& token) {
  std::string fingerprint = fingerprintOf(token);
  store.compareSet(kFingerprintKey, {},
                   std::vector<uint8_t>(fingerprint.begin(), fingerprint.end()));
}

c10::intrusive_ptr<c10d::Store> rendezvous(const ProcessEnv& env, const Timeouts& timeouts) {
  if (env.worldSize == 1 && !env.storeHostedByLauncher) {
    return c10::make_intrusive<c10d::HashStore>();
  }
  bool serve = env.rank == 0 && !env.storeHostedByLauncher;
  c10::intrusive_ptr<c10d::TCPStore> store =
      serve ? serveStore(env.masterAddr, env.masterPort, env.jobToken, timeouts.rendezvous)
            : connectStore(env.masterAddr, env.masterPort, timeouts.rendezvous);
  return jobScope(store, env.jobToken, "attempt-" + std::to_string(env.restartAttempt),
                  timeouts.rendezvous);
}

}  // namespace strata
