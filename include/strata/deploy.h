// strata/deploy/: running a training job on a cluster: the Kubernetes
// manifests of `strata k8s` (Indexed Jobs or a Kubeflow PyTorchJob), their
// options, the grouping of nodes and the layout map.
//
// Includes every public header of the folder.
#pragma once

#include "strata/deploy/job_token.h"
#include "strata/deploy/k8s_manifests.h"
#include "strata/deploy/k8s_options.h"
#include "strata/deploy/layout_map.h"
#include "strata/deploy/node_groups.h"
