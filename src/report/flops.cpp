#include "strata/report/flops.h"

namespace strata::train {

int64_t gptMatmulParameters(const GptShape& s) {
  int64_t perLayer = 4 * s.hidden * s.hidden + 2 * s.hidden * s.ffn;
  return s.layers * perLayer + s.hidden * s.vocab;
}

double gptTrainingFlopsPerToken(const GptShape& s) {
  return trainingFlopsPerToken(gptMatmulParameters(s), s.layers, s.hidden, s.seqLen);
}

double trainingFlopsPerToken(int64_t matmulParameters, int64_t layers, int64_t hidden,
                             int64_t seqLen) {
  return 6.0 * static_cast<double>(matmulParameters) +
         12.0 * static_cast<double>(layers * hidden * seqLen);
}

double modelFlopsUtilization(double flopsPerToken, double tokensPerSecond,
                             double peakFlopsPerWorker, int workers) {
  return flopsPerToken * tokensPerSecond / (peakFlopsPerWorker * workers);
}

}  // namespace strata::train
