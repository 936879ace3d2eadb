/* Model parameters as the host checks them (core/program/model_params.c): names the model does
 * not declare, values of the wrong type, and values outside a declared "min..max" range are
 * refused with the model, the parameter and what is allowed; ranges with fractional bounds
 * ("0..0.99", "0.5..1") hold like integer ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "program/model_params.h"

static const xpb_model_param decls[] = {
    {"dropout", XPB_MPARAM_FLOAT, "0.5", "0..0.99", "dropout probability"},
    {"scale", XPB_MPARAM_FLOAT, "1", "0.5..2", "a factor"},
    {"layers", XPB_MPARAM_INT, "2", "1..48", "layers"},
    {"free", XPB_MPARAM_FLOAT, "1", NULL, "no range"},
};
static const xpb_model_api model = {sizeof model, decls, 4, NULL};

/* The status of checking one parameter `key` = `value`; err.msg says why. */
static xpb_status check(const char *key, const char *value, xpb_err *err)
{
    xpb_kv kv = {(char *)key, (char *)value};
    memset(err, 0, sizeof *err);
    return xpb_model_params_check(&model, "toy", NULL, &kv, 1, err);
}

static void test_fractional_range(void **state)
{
    (void)state;
    xpb_err err;
    assert_int_equal(check("dropout", "0", &err), XPB_OK);
    assert_int_equal(check("dropout", "0.65", &err), XPB_OK);
    assert_int_equal(check("dropout", "0.99", &err), XPB_OK);
    assert_int_not_equal(check("dropout", "1", &err), XPB_OK);
    assert_non_null(strstr(err.msg, "dropout"));
    assert_non_null(strstr(err.msg, "0..0.99"));
    assert_int_not_equal(check("dropout", "-0.1", &err), XPB_OK);
    assert_int_equal(check("scale", "0.5", &err), XPB_OK);
    assert_int_not_equal(check("scale", "0.49", &err), XPB_OK);
    assert_int_not_equal(check("scale", "2.01", &err), XPB_OK);
    assert_int_equal(check("free", "1e9", &err), XPB_OK);
}

static void test_integers_names_and_types(void **state)
{
    (void)state;
    xpb_err err;
    assert_int_equal(check("layers", "48", &err), XPB_OK);
    assert_int_not_equal(check("layers", "49", &err), XPB_OK);
    assert_int_not_equal(check("layers", "2.5", &err), XPB_OK);
    assert_int_not_equal(check("dropout", "half", &err), XPB_OK);
    assert_int_not_equal(check("width", "3", &err), XPB_OK);
    assert_non_null(strstr(err.msg, "width"));
    assert_non_null(strstr(err.msg, "toy"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fractional_range),
        cmocka_unit_test(test_integers_names_and_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
