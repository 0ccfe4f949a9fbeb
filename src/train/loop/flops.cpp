#include "strata/train/loop/flops.h"

namespace strata::train {

int64_t gptMatmulParameters(const GptShape& s) {
  int64_t perLayer = 4 * s.hidden * s.hidden + 2 * s.hidden * s.ffn;
  return s.layers * perLayer + s.hidden * s.vocab;
}

double gptTrainingFlopsPerToken(const GptShape& s) {
  return 6.0 * static_cast<double>(gptMatmulParameters(s)) +
         12.0 * static_cast<double>(s.layers * s.hidden * s.seqLen);
}

double modelFlopsUtilization(double flopsPerToken, double tokensPerSecond,
                             double peakFlopsPerWorker, int workers) {
  return flopsPerToken * tokensPerSecond / (peakFlopsPerWorker * workers);
}

}  // namespace strata::train
