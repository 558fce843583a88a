/* The generated opcode tables: a few opcodes per version checked against
 * the numbers, cache counts, flags and magic numbers of the real interpreters. */
#include "opcodes.h"
#include "testlib.h"

static const char *name_of(const dp_optable *t, int byte) { return dp_opname_str[t->op[byte]]; }

static void test_every_version_has_a_table(void) {
    for (int m = DP_MIN_MINOR; m <= DP_MAX_MINOR; m++) {
        const dp_optable *t = dp_optable_for(m);
        CHECK(t != NULL && t->py_minor == m);
    }
    CHECK(dp_optable_for(7) == NULL);
    CHECK(dp_optable_for(14) == NULL);
}

static void test_opcode_numbers_move_between_versions(void) {
    CHECK_STR(name_of(dp_optable_for(8), 100), "LOAD_CONST");
    CHECK_STR(name_of(dp_optable_for(8), 23), "BINARY_ADD");
    CHECK_STR(name_of(dp_optable_for(8), 6), "ROT_FOUR");
    CHECK_STR(name_of(dp_optable_for(10), 121), "JUMP_IF_NOT_EXC_MATCH");
    CHECK_STR(name_of(dp_optable_for(11), 171), "CALL");
    CHECK_STR(name_of(dp_optable_for(11), 140), "JUMP_BACKWARD");
    CHECK_STR(name_of(dp_optable_for(12), 171), "CALL");
    CHECK_STR(name_of(dp_optable_for(13), 83), "LOAD_CONST");
    CHECK_STR(name_of(dp_optable_for(13), 53), "CALL");
    CHECK_STR(name_of(dp_optable_for(13), 57), "CALL_KW");
    /* unused bytes map to DPO_UNKNOWN */
    CHECK(dp_optable_for(8)->op[0] == DPO_UNKNOWN);
    CHECK(dp_optable_for(11)->op[0] == DPO_CACHE);
}

static void test_inline_caches(void) {
    const dp_optable *t8 = dp_optable_for(8), *t11 = dp_optable_for(11);
    const dp_optable *t12 = dp_optable_for(12), *t13 = dp_optable_for(13);
    CHECK(t8->caches[116] == 0);  /* LOAD_GLOBAL before 3.11: none */
    CHECK(t11->caches[116] == 5); /* LOAD_GLOBAL */
    CHECK(t11->caches[160] == 10); /* LOAD_METHOD */
    CHECK(t11->caches[166] == 1); /* PRECALL */
    CHECK(t11->caches[171] == 4); /* CALL */
    CHECK(t12->caches[106] == 9); /* LOAD_ATTR */
    CHECK(t12->caches[93] == 1);  /* FOR_ITER */
    CHECK(t12->caches[171] == 3); /* CALL */
    CHECK(t13->caches[91] == 4);  /* LOAD_GLOBAL */
    CHECK(t13->caches[77] == 1);  /* JUMP_BACKWARD */
    CHECK(t13->caches[53] == 3);  /* CALL */
    CHECK(t13->caches[83] == 0);  /* LOAD_CONST */
}

static void test_jump_flags(void) {
    const dp_optable *t8 = dp_optable_for(8), *t11 = dp_optable_for(11), *t13 = dp_optable_for(13);
    CHECK(t8->flags[113] == (DP_OPF_HASARG | DP_OPF_JABS)); /* JUMP_ABSOLUTE */
    CHECK(t8->flags[93] == (DP_OPF_HASARG | DP_OPF_JREL));  /* FOR_ITER */
    CHECK(t8->flags[83] == 0);                              /* RETURN_VALUE */
    CHECK(t11->flags[140] & DP_OPF_JREL);                   /* JUMP_BACKWARD */
    CHECK(t13->flags[72] & DP_OPF_JREL);                    /* FOR_ITER */
    CHECK((t13->flags[83] & (DP_OPF_JREL | DP_OPF_JABS)) == 0);
    CHECK(t13->flags[83] & DP_OPF_HASARG); /* 3.13 lowered HAVE_ARGUMENT to 44 */
}

static void test_magic_numbers(void) {
    static const int final[] = {3413, 3425, 3439, 3495, 3531, 3571};
    for (int m = DP_MIN_MINOR; m <= DP_MAX_MINOR; m++) {
        const dp_optable *t = dp_optable_for(m);
        CHECK(t->magic == final[m - DP_MIN_MINOR]);
        CHECK(dp_minor_for_magic(t->magic) == m);
        CHECK(dp_minor_for_magic(t->magic_first) == m);
        CHECK(dp_minor_for_magic((uint16_t)(t->magic_first - 1)) != m);
    }
    CHECK(dp_minor_for_magic(3394) == -1); /* 3.7 */
    CHECK(dp_minor_for_magic(3414) == -1);
    CHECK(dp_minor_for_magic(3600) == -1);
}

static void test_names_are_distinct(void) {
    CHECK_STR(dp_opname_str[DPO_UNKNOWN], "<unknown>");
    CHECK_STR(dp_opname_str[DPO_EXTENDED_ARG], "EXTENDED_ARG");
    for (int i = 1; i < DPO_COUNT; i++)
        CHECK(strcmp(dp_opname_str[i - 1], dp_opname_str[i]) != 0);
}

int main(void) {
    RUN(test_every_version_has_a_table);
    RUN(test_opcode_numbers_move_between_versions);
    RUN(test_inline_caches);
    RUN(test_jump_flags);
    RUN(test_magic_numbers);
    RUN(test_names_are_distinct);
    return TEST_REPORT();
}
