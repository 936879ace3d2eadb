/* Kink flips: elements where a backend's forward pass and the reference's land on different
 * sides of a kink of a piecewise-linear op. Two correct fp32 forward passes of a deep model
 * differ by ~1e-5 relative, so an input of ReLU / LeakyReLU, or an L1-loss difference, that
 * lies that close to 0 can take the other branch in one of them; the gradient then differs at
 * that element by its full size and the difference spreads backwards through every layer.
 * compare.h judges the gradients of a step with flips together, not one by one. */
#ifndef XPB_CORE_KINKS_H
#define XPB_CORE_KINKS_H

#include <stdint.h>

#include "program/model_program.h"
#include "run/session.h"

/* Counts the flips of one step run on sessions `a` and `b` (the same program `mp`, compiled
 * with keep_all so that every tensor is readable): the inputs y of RELU_BWD / LEAKY_RELU_BWD
 * (y > 0 or not) and the differences x - t of L1_LOSS_BWD (their sign). *flips gets the
 * count. XPB_OUT_OF_MEMORY, or the status of a failed read (message in err). */
xpb_status xpb_kink_flips(int64_t *flips, xpb_session *a, xpb_session *b,
                          const xpb_model_program *mp, xpb_err *err);

#endif
