// strata/report/: what a run reports: metrics.jsonl, the progress line, the run report
// and its pictures, model FLOPs, the measured peak, and memory accounting.
//
// Includes every public header of the folder.
#pragma once

#include "strata/report/flops.h"
#include "strata/report/loss_curve.h"
#include "strata/report/memory.h"
#include "strata/report/metrics.h"
#include "strata/report/peak_flops.h"
#include "strata/report/progress.h"
#include "strata/report/run_report.h"
#include "strata/report/tensor_memory.h"
