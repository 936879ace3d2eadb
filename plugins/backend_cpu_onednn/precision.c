/* The bf16-mixed precision policy: which tensors live in bf16 and which keep an fp32 master.
 *
 * Activations, activation gradients and network inputs are stored in bf16 (the primitives
 * compute in bf16 with fp32 accumulation, AMX or AVX512-BF16 where present); parameters,
 * state (running statistics, optimizer state), parameter gradients, losses and outputs stay
 * fp32. A parameter that a bf16 primitive reads keeps an fp32 master in the primitive's layout
 * and a bf16 shadow in the same layout (operand.c), which the optimizer kernels rewrite when
 * they update the master (kern_optim.c) and write() refreshes (transfer.c). The conversions
 * themselves are the inline odn_f32_to_bf16 / odn_bf16_to_f32 of odn.h. */
#include "odn.h"

dnnl_data_type_t odn_pref_dt(const xpb_executable *exe, uint32_t tid)
{
    const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, tid);
    if (t->dtype == XPB_DTYPE_I32)
        return dnnl_s32;
    if (!exe->bf16)
        return dnnl_f32;
    switch (t->role) {
    case XPB_ROLE_INPUT:
    case XPB_ROLE_ACTIVATION:
    case XPB_ROLE_ACTIVATION_GRAD:
        return dnnl_bf16;
    default:
        return dnnl_f32; /* parameters, state, gradients, losses, outputs stay fp32 */
    }
}

int odn_keeps_master(const xpb_tensor_desc *t)
{
    return t->dtype == XPB_DTYPE_F32 && (t->role == XPB_ROLE_PARAM || t->role == XPB_ROLE_STATE);
}
