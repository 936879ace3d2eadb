/* Near-ties between two runs of one step, and a reference that takes the backend's side of
 * them.
 *
 * Two correct fp32 forward passes of a deep model differ by ~1e-6 relative, so an input of
 * ReLU / LeakyReLU or an L1-loss difference that lies that close to 0 can fall on the other side
 * of the kink in one of them (a kink flip), and a max-pool window whose two largest inputs lie
 * that close can have another winner (a pool flip). The backward pass then differs at that
 * element by its full size, and the difference spreads into every gradient below it: no
 * per-tensor tolerance tells such a step from a wrong kernel.
 *
 * The aligned reference (xpb_kink_reference) removes the difference instead of excusing it:
 * the reference backend runs the program with every decision input of a backward op
 * (RELU_BWD / LEAKY_RELU_BWD's y, L1_LOSS_BWD's x and target, MAXPOOL_BWD's index workspace)
 * replaced by a host-written copy that holds the backend's forward values (for max pooling the
 * backend's argmax, in the reference's encoding of docs/ops.md). Everywhere the two agree that
 * changes nothing; at a flip the reference now computes what a correct backend with the
 * backend's decision computes, so every gradient can be judged tensor by tensor by rounding
 * alone. A flip is excused only when it is a near-tie: the two values lie within XPB_KINK_NEAR
 * of the reference tensor's RMS of each other. A flip beyond that is an error (far) and fails
 * verification with its place. */
#ifndef XPB_CORE_KINKS_H
#define XPB_CORE_KINKS_H

#include <stdint.h>

#include "check/judge.h"
#include "program/model_program.h"
#include "run/session.h"

/* How far apart the backend's and the reference's values at a flip may be, as a fraction of
 * the RMS of the reference's tensor, for the flip to be a near-tie. Correct fp32 backends
 * differ by 1e-7 .. 1e-5 of the RMS in the deepest activations of the standard runs; a wrong
 * kernel (a dropped bias, a wrong sign) moves whole channels by 1e-2 and more. */
#define XPB_KINK_NEAR 1e-3

/* Counts the flips of one step run on sessions `a` and `b` (the same program `mp`, compiled
 * with keep_all so that every tensor is readable): the inputs y of RELU_BWD / LEAKY_RELU_BWD
 * (y > 0 or not) and the differences x - t of L1_LOSS_BWD (their sign), near or far. *flips
 * gets the count. XPB_OUT_OF_MEMORY, or the status of a failed read (message in err). */
xpb_status xpb_kink_flips(int64_t *flips, xpb_session *a, xpb_session *b,
                          const xpb_model_program *mp, xpb_err *err);

/* The near-ties of one step as the aligned reference counted them. */
struct xpb_kink_count {
    int64_t flips;      /* kink elements on the other side within rounding: excused */
    int64_t pool_flips; /* max-pool windows won by another element within rounding: excused */
    int64_t far;        /* either, beyond XPB_KINK_NEAR: not excused */
    /* The largest distance of an excused flip, as a fraction of its tensor's RMS. */
    double widest;
    /* The first far flip (when far > 0): the tensor the decision reads (y of a ReLU, x of an L1
     * loss, the input of a max pool), the element (for a pool: the backend's maximum), the
     * backend's and the reference's value there (for a pool: the reference's values at the
     * backend's maximum and at its own), error = the distance / RMS, tolerance XPB_KINK_NEAR. */
    struct xpb_located first_far;
};

/* The aligned reference: a copy of a model program whose backward ops read their decisions
 * from host-written tensors. Opaque. */
typedef struct xpb_kink_reference xpb_kink_reference;

/* Builds the aligned copy of `mp` (which must outlive it). *out is owned by the caller
 * (xpb_kink_reference_free); XPB_OUT_OF_MEMORY. A program without such ops gives a copy
 * without decisions, equal to mp. */
xpb_status xpb_kink_reference_create(xpb_kink_reference **out, const xpb_model_program *mp,
                                     xpb_err *err);
void xpb_kink_reference_free(xpb_kink_reference *k); /* NULL-safe */

/* The program to open the reference session on: owned by k, valid until it is freed. Tensor
 * ids of mp keep their meaning; the decision tensors follow them. */
const xpb_model_program *xpb_kink_reference_program(const xpb_kink_reference *k);

/* Writes the backend's decisions, read from `dut` (the original program, keep_all, after its
 * step), into `ref` (opened on xpb_kink_reference_program, before its step). */
xpb_status xpb_kink_reference_write(xpb_kink_reference *k, xpb_session *ref, xpb_session *dut,
                                    xpb_err *err);

/* After the step of `ref`: compares the decisions written with the reference's own values and
 * counts near and far flips into *out. */
xpb_status xpb_kink_reference_count(struct xpb_kink_count *out, xpb_kink_reference *k,
                                    xpb_session *ref, xpb_err *err);

#endif
