// strata/train/loop/: the training loop: the Trainer, optimizer and LR schedule, gradient norm
// and clipping, metrics, progress, generation, checkpoint conversion, the CPU tensor counter.
//
// Includes every public header of the folder.
#pragma once

#include "strata/train/loop/checkpoint_convert.h"
#include "strata/train/loop/device.h"
#include "strata/train/loop/evaluate_text.h"
#include "strata/train/loop/export_hugging_face.h"
#include "strata/train/loop/flops.h"
#include "strata/train/loop/generate.h"
#include "strata/train/loop/grad_norm.h"
#include "strata/train/loop/hugging_face_import.h"
#include "strata/train/loop/loss_curve.h"
#include "strata/train/loop/loss_spike.h"
#include "strata/train/loop/lr_schedule.h"
#include "strata/train/loop/memory.h"
#include "strata/train/loop/metrics.h"
#include "strata/train/loop/optimizer.h"
#include "strata/train/loop/peak_flops.h"
#include "strata/train/loop/precision.h"
#include "strata/train/loop/progress.h"
#include "strata/train/loop/run_report.h"
#include "strata/train/loop/tensor_memory.h"
#include "strata/train/loop/train_loop.h"
#include "strata/train/loop/trainer.h"
