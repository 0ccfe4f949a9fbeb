// strata/runtime/: the process world: the torchrun-compatible environment, rendezvous with a job
// token, the validated pp x dp x tp layout, and communicators (c10d, and a
// shared-memory transport for one host) with a timeout on every wait, and the
// flight recorder of every rank's communication.
//
// Includes every public header of the folder.
#pragma once

#include "strata/runtime/allocator_tuning.h"
#include "strata/runtime/communicator.h"
#include "strata/runtime/flight_recorder.h"
#include "strata/runtime/layout.h"
#include "strata/runtime/process_env.h"
#include "strata/runtime/rendezvous.h"
#include "strata/runtime/tensor_header.h"
#include "strata/runtime/threads.h"
#include "strata/runtime/timeouts.h"
#include "strata/runtime/world.h"
