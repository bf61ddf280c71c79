// SPDX-License-Identifier: GPL-2.0
/* Verbs ops for MRs, MWs and AHs (mr.c, mw.c, ah.c; keys in keys.c). */
#include "mem.h"

const struct ib_device_ops softrnic_mem_ops = {
	.alloc_mr = softrnic_alloc_mr,
	.alloc_mw = softrnic_alloc_mw,
	.create_ah = softrnic_create_ah,
	.create_user_ah = softrnic_create_ah,
	.dealloc_mw = softrnic_dealloc_mw,
	.dereg_mr = softrnic_dereg_mr,
	.destroy_ah = softrnic_destroy_ah,
	.get_dma_mr = softrnic_get_dma_mr,
	.map_mr_sg = softrnic_map_mr_sg,
	.modify_ah = softrnic_modify_ah,
	.query_ah = softrnic_query_ah,
	.reg_user_mr = softrnic_reg_user_mr,
	.rereg_user_mr = softrnic_rereg_user_mr,

	INIT_RDMA_OBJ_SIZE(ib_ah, softrnic_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_mw, softrnic_mw, ibmw),
};
