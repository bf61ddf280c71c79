// SPDX-License-Identifier: GPL-2.0
/* Verbs ops for MRs, MWs and AHs. */
#include "softrnic.h"

const struct ib_device_ops softrnic_mem_ops = {
};
