// strata/context_parallel/: context parallelism: sequences split over a cp
// group in load-balanced chunks, and causal attention over the whole
// sequences by ring attention or all-to-all (Ulysses) attention.
//
// Includes every public header of the folder.
#pragma once

#include "strata/context_parallel/all_to_all_attention.h"
#include "strata/context_parallel/context_parallel.h"
#include "strata/context_parallel/packed_documents.h"
#include "strata/context_parallel/ring_attention.h"
#include "strata/context_parallel/sequence_layout.h"
