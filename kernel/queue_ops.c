// SPDX-License-Identifier: GPL-2.0
/* Verbs ops for CQs, QPs, SRQs and their shared rings. */
#include "softrnic.h"

const struct ib_device_ops softrnic_queue_ops = {
};
