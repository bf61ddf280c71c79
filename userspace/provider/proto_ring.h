// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kernel/proto/ring.h, the ring index math and WQE rules compiled into the
 * kernel module too, for the provider.  It shares its file name with our
 * own ring.h, and the directory it lives in must not go on the include path
 * of C++ code (kernel/ holds a limits.h), so it is reached by a path
 * relative to this file (${SOFTRNIC_PROTO_DIR}, from the provider sources).
 */
#ifndef SOFTRNIC_PROTO_RING_WRAP_H
#define SOFTRNIC_PROTO_RING_WRAP_H

#include "../../kernel/proto/ring.h"

#endif /* SOFTRNIC_PROTO_RING_WRAP_H */
