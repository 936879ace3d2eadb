/* CycleGAN (Zhu et al. 2017) as the reference implementation (junyanz/pytorch-CycleGAN-and-
 * pix2pix, models/cycle_gan_model.py and models/networks.py) trains it, with instance norm
 * (no affine, no running statistics), no dropout and no image pool:
 *
 *   small  3x128x128, ResNet generators with 6 residual blocks (netG resnet_6blocks)
 *   full   3x256x256, 9 residual blocks (resnet_9blocks): the paper's setting
 *
 * Networks, named as the reference (G_A: A -> B, G_B: B -> A, D_A judges domain B, D_B judges
 * domain A); parameter names are "<net>.<state-dict key>", e.g. "G_A.model.1.weight" is
 * netG_A.model[1].weight and "G_B.model.10.conv_block.5.bias" the second conv of G_B's first
 * residual block:
 *   ResnetGenerator: model.0 ReflectionPad(3), model.1 conv7x7 3->ngf, IN, ReLU; model.4 and
 *     model.7 conv3x3/2 pad 1 to 2ngf and 4ngf, each + IN + ReLU; model.10 .. model.9+B
 *     ResnetBlocks (conv_block.0 ReflectionPad(1), .1 conv3x3, .2 IN, .3 ReLU, .4 pad, .5 conv3x3,
 *     .6 IN; out = x + conv_block(x)); model.10+B and model.13+B ConvTranspose3x3/2 pad 1
 *     output_padding 1 to 2ngf and ngf, each + IN + ReLU; model.16+B ReflectionPad(3),
 *     model.17+B conv7x7 ngf->3, model.18+B tanh. Every conv has a bias.
 *   NLayerDiscriminator (70x70 PatchGAN, n_layers 3): model.0 conv4x4/2 pad 1 3->ndf + LeakyReLU
 *     0.2; model.2, model.5 conv4x4/2 pad 1 to 2ndf and 4ndf, model.8 conv4x4/1 pad 1 to 8ndf,
 *     each + IN + LeakyReLU 0.2; model.11 conv4x4/1 pad 1 to 1. Every conv has a bias.
 * Weights start from N(0, 0.02), biases from 0 (init_type normal, init_gain 0.02).
 *
 * One training step is two phases, as optimize_parameters():
 *   generators (group G: G_A, G_B): fake_B = G_A(real_A), rec_A = G_B(fake_B), fake_A =
 *     G_B(real_B), rec_B = G_A(fake_A), idt_A = G_A(real_B), idt_B = G_B(real_A);
 *     loss_G = MSE(D_A(fake_B), 1) + MSE(D_B(fake_A), 1) + 10 L1(rec_A, real_A)
 *              + 10 L1(rec_B, real_B) + 5 L1(idt_A, real_B) + 5 L1(idt_B, real_A)
 *   discriminators (group D: D_A, D_B), on the fakes of the first phase, detached:
 *     loss_D = 0.5 (MSE(D_A(real_B), 1) + MSE(D_A(fake_B), 0))
 *            + 0.5 (MSE(D_B(real_A), 1) + MSE(D_B(fake_A), 0))
 * Both with Adam (lr 2e-4, betas 0.5 / 0.999, eps 1e-8). Layer names are "<value>/<net>.<module
 * path>", e.g. "rec_A/G_B.model.4" or "pred_fake_B/D_A.model.11", so that the six generator
 * and six discriminator applications stay apart in profiles. */
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

static const xpb_model_param cyclegan_params[] = {
    {"variant", XPB_MPARAM_STRING, "small", "small|full",
     "small = 6 residual blocks at 128x128; full = 9 residual blocks at 256x256 (the paper's)"},
    {"image_size", XPB_MPARAM_INT, "0", "0..1024",
     "input height and width; 0 = the variant's (128 small, 256 full); else a multiple of 4, at "
     "least 24 (smaller sizes are for quick tests)"},
    {"ngf", XPB_MPARAM_INT, "64", "1..1024",
     "generator filters in the first conv layer (the reference's --ngf); 64 is the published "
     "model"},
    {"ndf", XPB_MPARAM_INT, "64", "1..1024",
     "discriminator filters in the first conv layer (the reference's --ndf); 64 is the published "
     "model"},
};

#define MAX_BLOCKS 9
#define G_CONVS (6 + 2 * MAX_BLOCKS) /* stem, 2 down, 2 per block, 2 up, head */
#define D_CONVS 5

/* The weight and bias values of one convolution (declared once, applied several times). */
typedef struct conv_params {
    xpb_value w, b;
    xpb_op_attrs attrs;
    int transposed;
} conv_params;

typedef struct generator {
    const char *name; /* "G_A" */
    int blocks;
    conv_params conv[G_CONVS]; /* in forward order */
} generator;

typedef struct discriminator {
    const char *name; /* "D_A" */
    conv_params conv[D_CONVS];
} discriminator;

/* Everything one build needs. */
typedef struct cyclegan {
    xpb_builder *b;
    const xpb_builder_api *api;
    uint32_t group_g, group_d;
} cyclegan;

/* Declares "<net>.<path>.weight" (N(0, 0.02)) and "<net>.<path>.bias" (0). A transposed conv's
 * weight is [in, out, k, k] as PyTorch's ConvTranspose2d. */
static xpb_status declare_conv(conv_params *c, const cyclegan *m, uint32_t group, const char *net,
                               const char *path, int64_t in_c, int64_t out_c, int64_t k,
                               int32_t stride, int32_t pad, int transposed)
{
    char name[128];
    xpb_param_desc w = {name,
                        4,
                        {transposed ? in_c : out_c, transposed ? out_c : in_c, k, k},
                        {XPB_INIT_NORMAL, 0.0, 0.02},
                        group,
                        1};
    xpb_param_desc bias = {name, 1, {out_c, 1, 1, 1}, {XPB_INIT_ZEROS, 0, 0}, group, 1};
    snprintf(name, sizeof name, "%s.%s.weight", net, path);
    XPB_TRY(m->api->parameter(&c->w, m->b, &w));
    snprintf(name, sizeof name, "%s.%s.bias", net, path);
    XPB_TRY(m->api->parameter(&c->b, m->b, &bias));
    memset(&c->attrs, 0, sizeof c->attrs);
    c->attrs.stride[0] = c->attrs.stride[1] = stride;
    c->attrs.pad[0] = c->attrs.pad[1] = pad;
    if (transposed)
        c->attrs.output_padding[0] = c->attrs.output_padding[1] = 1;
    c->transposed = transposed;
    return XPB_OK;
}

static xpb_status declare_generator(generator *g, const cyclegan *m, const char *name, int blocks,
                                    int64_t ngf)
{
    char path[64];
    conv_params *c = g->conv;
    g->name = name;
    g->blocks = blocks;
    XPB_TRY(declare_conv(c++, m, m->group_g, name, "model.1", 3, ngf, 7, 1, 0, 0));
    XPB_TRY(declare_conv(c++, m, m->group_g, name, "model.4", ngf, 2 * ngf, 3, 2, 1, 0));
    XPB_TRY(declare_conv(c++, m, m->group_g, name, "model.7", 2 * ngf, 4 * ngf, 3, 2, 1, 0));
    for (int i = 0; i < blocks; i++)
        for (int j = 1; j <= 5; j += 4) {
            snprintf(path, sizeof path, "model.%d.conv_block.%d", 10 + i, j);
            XPB_TRY(declare_conv(c++, m, m->group_g, name, path, 4 * ngf, 4 * ngf, 3, 1, 0, 0));
        }
    snprintf(path, sizeof path, "model.%d", 10 + blocks);
    XPB_TRY(declare_conv(c++, m, m->group_g, name, path, 4 * ngf, 2 * ngf, 3, 2, 1, 1));
    snprintf(path, sizeof path, "model.%d", 13 + blocks);
    XPB_TRY(declare_conv(c++, m, m->group_g, name, path, 2 * ngf, ngf, 3, 2, 1, 1));
    snprintf(path, sizeof path, "model.%d", 17 + blocks);
    XPB_TRY(declare_conv(c++, m, m->group_g, name, path, ngf, 3, 7, 1, 0, 0));
    return XPB_OK;
}

static xpb_status declare_discriminator(discriminator *d, const cyclegan *m, const char *name,
                                        int64_t ndf)
{
    d->name = name;
    XPB_TRY(declare_conv(&d->conv[0], m, m->group_d, name, "model.0", 3, ndf, 4, 2, 1, 0));
    XPB_TRY(declare_conv(&d->conv[1], m, m->group_d, name, "model.2", ndf, 2 * ndf, 4, 2, 1, 0));
    XPB_TRY(
        declare_conv(&d->conv[2], m, m->group_d, name, "model.5", 2 * ndf, 4 * ndf, 4, 2, 1, 0));
    XPB_TRY(
        declare_conv(&d->conv[3], m, m->group_d, name, "model.8", 4 * ndf, 8 * ndf, 4, 1, 1, 0));
    XPB_TRY(declare_conv(&d->conv[4], m, m->group_d, name, "model.11", 8 * ndf, 1, 4, 1, 1, 0));
    return XPB_OK;
}

/* ---- applications: every op's layer is "<app>/<net>.<module path>" ---- */

static xpb_status apply_conv(xpb_value *x, const cyclegan *m, const char *app, const char *net,
                             const char *path, const conv_params *c)
{
    char layer[192];
    snprintf(layer, sizeof layer, "%s/%s.%s", app, net, path);
    xpb_value in[3] = {*x, c->w, c->b};
    return m->api->op(x, m->b, layer, c->transposed ? XPB_OP_CONV_T2D : XPB_OP_CONV2D, in, 3,
                      &c->attrs);
}

/* A one-input op: ReLU, LeakyReLU 0.2, instance norm (eps 1e-5), reflection pad, tanh. */
static xpb_status apply_unary(xpb_value *x, const cyclegan *m, const char *app, const char *net,
                              const char *path, uint32_t kind, int32_t pad)
{
    char layer[192];
    xpb_op_attrs a = {0};
    a.pad[0] = a.pad[1] = pad;
    a.negative_slope = 0.2f;
    a.eps = 1e-5f;
    snprintf(layer, sizeof layer, "%s/%s.%s", app, net, path);
    return m->api->op(x, m->b, layer, kind, x, 1, &a);
}

/* conv, IN, ReLU at model.<i>, model.<i+1>, model.<i+2>. */
static xpb_status conv_in_relu(xpb_value *x, const cyclegan *m, const char *app, const char *net,
                               int i, const conv_params *c)
{
    char path[32];
    snprintf(path, sizeof path, "model.%d", i);
    XPB_TRY(apply_conv(x, m, app, net, path, c));
    snprintf(path, sizeof path, "model.%d", i + 1);
    XPB_TRY(apply_unary(x, m, app, net, path, XPB_OP_INSTANCENORM, 0));
    snprintf(path, sizeof path, "model.%d", i + 2);
    return apply_unary(x, m, app, net, path, XPB_OP_RELU, 0);
}

/* *out = g(x); `app` names the result (fake_B, rec_A ...). */
static xpb_status apply_generator(xpb_value *out, const cyclegan *m, const generator *g,
                                  const char *app, xpb_value x)
{
    const char *net = g->name;
    const conv_params *c = g->conv;
    char path[48];
    XPB_TRY(apply_unary(&x, m, app, net, "model.0", XPB_OP_REFLECTION_PAD, 3));
    XPB_TRY(conv_in_relu(&x, m, app, net, 1, c++));
    XPB_TRY(conv_in_relu(&x, m, app, net, 4, c++));
    XPB_TRY(conv_in_relu(&x, m, app, net, 7, c++));
    for (int i = 0; i < g->blocks; i++) {
        xpb_value y = x;
        static const uint32_t ops[7] = {XPB_OP_REFLECTION_PAD, 0, XPB_OP_INSTANCENORM, XPB_OP_RELU,
                                        XPB_OP_REFLECTION_PAD, 0, XPB_OP_INSTANCENORM};
        for (int j = 0; j < 7; j++) {
            snprintf(path, sizeof path, "model.%d.conv_block.%d", 10 + i, j);
            if (ops[j] == 0)
                XPB_TRY(apply_conv(&y, m, app, net, path, c++));
            else
                XPB_TRY(apply_unary(&y, m, app, net, path, ops[j], 1));
        }
        char layer[192];
        snprintf(layer, sizeof layer, "%s/%s.model.%d.add", app, net, 10 + i);
        xpb_value sum[2] = {x, y};
        XPB_TRY(m->api->op(&x, m->b, layer, XPB_OP_ADD, sum, 2, NULL));
    }
    XPB_TRY(conv_in_relu(&x, m, app, net, 10 + g->blocks, c++));
    XPB_TRY(conv_in_relu(&x, m, app, net, 13 + g->blocks, c++));
    snprintf(path, sizeof path, "model.%d", 16 + g->blocks);
    XPB_TRY(apply_unary(&x, m, app, net, path, XPB_OP_REFLECTION_PAD, 3));
    snprintf(path, sizeof path, "model.%d", 17 + g->blocks);
    XPB_TRY(apply_conv(&x, m, app, net, path, c));
    snprintf(path, sizeof path, "model.%d", 18 + g->blocks);
    XPB_TRY(apply_unary(&x, m, app, net, path, XPB_OP_TANH, 0));
    *out = x;
    return XPB_OK;
}

/* *out = d(x), the PatchGAN's map of scores. */
static xpb_status apply_discriminator(xpb_value *out, const cyclegan *m, const discriminator *d,
                                      const char *app, xpb_value x)
{
    static const int conv_at[D_CONVS] = {0, 2, 5, 8, 11};
    char path[32];
    for (int i = 0; i < D_CONVS; i++) {
        snprintf(path, sizeof path, "model.%d", conv_at[i]);
        XPB_TRY(apply_conv(&x, m, app, d->name, path, &d->conv[i]));
        if (i == D_CONVS - 1)
            break;
        if (i > 0) {
            snprintf(path, sizeof path, "model.%d", conv_at[i] + 1);
            XPB_TRY(apply_unary(&x, m, app, d->name, path, XPB_OP_INSTANCENORM, 0));
        }
        snprintf(path, sizeof path, "model.%d", conv_at[i] + (i > 0 ? 2 : 1));
        XPB_TRY(apply_unary(&x, m, app, d->name, path, XPB_OP_LEAKY_RELU, 0));
    }
    *out = x;
    return XPB_OK;
}

/* Adds weight * LOSS(x, target) to `phase`; `kind` is MSE_LOSS or L1_LOSS. */
static xpb_status add_loss(const cyclegan *m, uint32_t phase, const char *layer, uint32_t kind,
                           xpb_value x, xpb_value target, double weight)
{
    xpb_value loss, in[2] = {x, target};
    XPB_TRY(m->api->op(&loss, m->b, layer, kind, in, 2, NULL));
    return m->api->loss(m->b, phase, loss, weight);
}

static int64_t conv_out(int64_t h, int64_t k, int64_t stride, int64_t pad)
{
    return (h + 2 * pad - k) / stride + 1;
}

static xpb_status cyclegan_build(xpb_builder *b, const xpb_builder_api *api)
{
    const char *variant;
    int64_t size, ngf, ndf;
    XPB_TRY(api->param_string(&variant, b, "variant"));
    XPB_TRY(api->param_int(&size, b, "image_size"));
    XPB_TRY(api->param_int(&ngf, b, "ngf"));
    XPB_TRY(api->param_int(&ndf, b, "ndf"));
    const int full = strcmp(variant, "full") == 0, blocks = full ? 9 : 6;
    if (ngf < 1 || ngf > 1024 || ndf < 1 || ndf > 1024) /* the declared ranges */
        return xpb_model_fail(b, api, XPB_INVALID_ARGUMENT,
                              "parameters 'ngf' and 'ndf' must be 1..1024, found %lld and %lld",
                              (long long)ngf, (long long)ndf);
    if (size == 0)
        size = full ? 256 : 128;
    if (size % 4 != 0 || size < 24 || size > 1024)
        return xpb_model_fail(b, api, XPB_INVALID_ARGUMENT,
                              "parameter 'image_size' must be 0, or a multiple of 4 from 24 to "
                              "1024 (the generator halves the size twice and the discriminator "
                              "needs 3x3 before its two stride-1 convolutions), found %lld",
                              (long long)size);

    cyclegan m = {.b = b, .api = api};
    static const double lambda_cycle = 10.0, lambda_identity = 0.5;
    const xpb_optimizer_desc adam = {
        .kind = XPB_OPTIMIZER_ADAM, .lr = 2e-4, .beta1 = 0.5, .beta2 = 0.999, .eps = 1e-8};
    uint32_t phase_g, phase_d;
    XPB_TRY(api->group(&m.group_g, b, "G"));
    XPB_TRY(api->group(&m.group_d, b, "D"));
    XPB_TRY(api->phase(&phase_g, b, "generators", m.group_g, &adam));
    XPB_TRY(api->phase(&phase_d, b, "discriminators", m.group_d, &adam));

    const int64_t n = api->batch_size(b);
    xpb_value real_a, real_b;
    xpb_input_desc in_a = {"real_A", XPB_DTYPE_F32, 4, {n, 3, size, size}, -1.0, 1.0};
    xpb_input_desc in_b = {"real_B", XPB_DTYPE_F32, 4, {n, 3, size, size}, -1.0, 1.0};
    XPB_TRY(api->input(&real_a, b, &in_a));
    XPB_TRY(api->input(&real_b, b, &in_b));

    generator g_a, g_b;
    discriminator d_a, d_b;
    XPB_TRY(declare_generator(&g_a, &m, "G_A", blocks, ngf));
    XPB_TRY(declare_generator(&g_b, &m, "G_B", blocks, ngf));
    XPB_TRY(declare_discriminator(&d_a, &m, "D_A", ndf));
    XPB_TRY(declare_discriminator(&d_b, &m, "D_B", ndf));

    /* GANLoss targets: the real and fake labels expanded to the PatchGAN's output. */
    int64_t p = conv_out(conv_out(conv_out(size, 4, 2, 1), 4, 2, 1), 4, 2, 1);
    p = conv_out(conv_out(p, 4, 1, 1), 4, 1, 1);
    const int64_t patch[4] = {n, 1, p, p};
    xpb_value label_real, label_fake;
    XPB_TRY(api->constant(&label_real, b, "real_label", 4, patch, 1.0));
    XPB_TRY(api->constant(&label_fake, b, "fake_label", 4, patch, 0.0));

    /* forward() */
    xpb_value fake_b, rec_a, fake_a, rec_b, idt_a, idt_b, pred;
    XPB_TRY(apply_generator(&fake_b, &m, &g_a, "fake_B", real_a));
    XPB_TRY(apply_generator(&rec_a, &m, &g_b, "rec_A", fake_b));
    XPB_TRY(apply_generator(&fake_a, &m, &g_b, "fake_A", real_b));
    XPB_TRY(apply_generator(&rec_b, &m, &g_a, "rec_B", fake_a));
    XPB_TRY(api->output(b, "fake_B", fake_b));
    XPB_TRY(api->output(b, "fake_A", fake_a));

    /* backward_G(): identity, adversarial and cycle terms. */
    XPB_TRY(apply_generator(&idt_a, &m, &g_a, "idt_A", real_b));
    XPB_TRY(add_loss(&m, phase_g, "loss_idt_A", XPB_OP_L1_LOSS, idt_a, real_b,
                     lambda_cycle * lambda_identity));
    XPB_TRY(apply_generator(&idt_b, &m, &g_b, "idt_B", real_a));
    XPB_TRY(add_loss(&m, phase_g, "loss_idt_B", XPB_OP_L1_LOSS, idt_b, real_a,
                     lambda_cycle * lambda_identity));
    XPB_TRY(apply_discriminator(&pred, &m, &d_a, "pred_fake_B", fake_b));
    XPB_TRY(add_loss(&m, phase_g, "loss_G_A", XPB_OP_MSE_LOSS, pred, label_real, 1.0));
    XPB_TRY(apply_discriminator(&pred, &m, &d_b, "pred_fake_A", fake_a));
    XPB_TRY(add_loss(&m, phase_g, "loss_G_B", XPB_OP_MSE_LOSS, pred, label_real, 1.0));
    XPB_TRY(add_loss(&m, phase_g, "loss_cycle_A", XPB_OP_L1_LOSS, rec_a, real_a, lambda_cycle));
    XPB_TRY(add_loss(&m, phase_g, "loss_cycle_B", XPB_OP_L1_LOSS, rec_b, real_b, lambda_cycle));

    /* backward_D_A() and backward_D_B(), on the detached fakes (pool size 0). */
    xpb_value detached;
    XPB_TRY(apply_discriminator(&pred, &m, &d_a, "pred_real_B", real_b));
    XPB_TRY(add_loss(&m, phase_d, "loss_D_A_real", XPB_OP_MSE_LOSS, pred, label_real, 0.5));
    XPB_TRY(api->stop_gradient(&detached, b, fake_b));
    XPB_TRY(apply_discriminator(&pred, &m, &d_a, "pred_fake_B_detached", detached));
    XPB_TRY(add_loss(&m, phase_d, "loss_D_A_fake", XPB_OP_MSE_LOSS, pred, label_fake, 0.5));
    XPB_TRY(apply_discriminator(&pred, &m, &d_b, "pred_real_A", real_a));
    XPB_TRY(add_loss(&m, phase_d, "loss_D_B_real", XPB_OP_MSE_LOSS, pred, label_real, 0.5));
    XPB_TRY(api->stop_gradient(&detached, b, fake_a));
    XPB_TRY(apply_discriminator(&pred, &m, &d_b, "pred_fake_A_detached", detached));
    XPB_TRY(add_loss(&m, phase_d, "loss_D_B_fake", XPB_OP_MSE_LOSS, pred, label_fake, 0.5));
    return XPB_OK;
}

static const xpb_model_api cyclegan_api = {
    .struct_size = sizeof(xpb_model_api),
    .params = cyclegan_params,
    .n_params = sizeof cyclegan_params / sizeof cyclegan_params[0],
    .build = cyclegan_build,
};

XPB_DEFINE_PLUGIN(XPB_PLUGIN_MODEL, "cyclegan", "1.0.0",
                  "CycleGAN: two ResNet generators, two 70x70 PatchGANs, two-phase Adam step", 0,
                  &cyclegan_api)
