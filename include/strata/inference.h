// strata/inference/: a trained model used: text generation with a KV cache, the loss
// of a text and the exact answers to conversations (strata generate, strata eval).
//
// Includes every public header of the folder.
#pragma once

#include "strata/inference/evaluate_chat.h"
#include "strata/inference/evaluate_text.h"
#include "strata/inference/generate.h"
