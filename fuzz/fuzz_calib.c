/* fuzz_calib.c - calibration JSON reader (tp_calib_from_json) over the built-in defaults; an
   accepted file must write back out (tp_calib_to_json) and read again. */
#include "fuzz.h"
#include "trainplan.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* tp_calib_init parses the built-in calibration JSON: once, then copied, so the time goes
       to the input rather than to the defaults (about 1,000 inputs/s before, most of it here) */
    static struct tp_calib base, c, again;
    static int ready;
    struct tp_error err;
    if (!ready) {
        tp_calib_init(&base);
        ready = 1;
    }
    c = base;
    if (tp_calib_from_json((const char *)data, size, &c, &err) != TP_OK)
        return 0;
    static char buf[1 << 17];
    size_t n = tp_calib_to_json(&c, buf, sizeof buf);
    if (n > sizeof buf)
        return 0; /* n counts the NUL too */
    again = base;
    if (tp_calib_from_json(buf, strlen(buf), &again, &err) != TP_OK) {
        fprintf(stderr, "fuzz: an accepted calibration does not read back: %s\n", err.msg);
        abort();
    }
    return 0;
}
