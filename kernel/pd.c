// SPDX-License-Identifier: GPL-2.0
/* Protection domains.  ib_core allocates the object and tracks it. */
#include "softrnic.h"
#include "limits.h"

int softrnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibpd->device);
	struct softrnic_pd *pd = to_spd(ibpd);
	struct softrnic_alloc_pd_resp resp = {};
	int id;

	id = ida_alloc_max(&sdev->pd_ida, SOFTRNIC_MAX_PD - 1, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	pd->pdn = id;

	if (udata && udata->outlen) {
		int err;

		resp.pdn = pd->pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min_t(size_t, sizeof(resp), udata->outlen));
		if (err) {
			ida_free(&sdev->pd_ida, pd->pdn);
			return err;
		}
	}
	return 0;
}

int softrnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibpd->device);

	ida_free(&sdev->pd_ida, to_spd(ibpd)->pdn);
	return 0;
}
