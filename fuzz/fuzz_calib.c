/* fuzz_calib.c - calibration JSON reader (tp_calib_from_json) over the built-in defaults; an
   accepted file must write back out (tp_calib_to_json) and read again. */
#include "fuzz.h"
#include "trainplan.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tp_calib c, again;
    struct tp_error err;
    tp_calib_init(&c);
    if (tp_calib_from_json((const char *)data, size, &c, &err) != TP_OK)
        return 0;
    static char buf[1 << 17];
    size_t n = tp_calib_to_json(&c, buf, sizeof buf);
    if (n > sizeof buf)
        return 0; /* n counts the NUL too */
    tp_calib_init(&again);
    if (tp_calib_from_json(buf, strlen(buf), &again, &err) != TP_OK) {
        fprintf(stderr, "fuzz: an accepted calibration does not read back: %s\n", err.msg);
        abort();
    }
    return 0;
}
