/* tessel — versions: of the library, of its ABI (the soname) and of the model-file
 * format.
 *
 * The numbers must be meson's project version (meson.build `project(... version :
 * ...)`): meson refuses to configure when they differ. The macros are the version of the
 * headers an application was compiled with; the functions that of the library it runs
 * with (they differ when the shared library was replaced after the build).
 *
 *     if (strcmp(tsl_version_string(), TSL_VERSION_STRING) != 0) ... // another release
 */
#ifndef TESSEL_VERSION_H
#define TESSEL_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_VERSION_MAJOR 0
#define TSL_VERSION_MINOR 1
#define TSL_VERSION_PATCH 0
/* "MAJOR.MINOR.PATCH", meson's project version. */
#define TSL_VERSION_STRING "0.1.0"
/* The shared libraries' soname version: libtessel.so.TSL_SOVERSION and
 * libtessel_runtime.so.TSL_SOVERSION ("MAJOR.MINOR": before 1.0 a minor release may
 * change the ABI). */
#define TSL_SOVERSION "0.1"
/* The format version of AOT model files (docs/aot.md) this release writes and the only
 * one it reads (tsl_model_file_load refuses others with TSL_ERR_UNSUPPORTED;
 * tsl_model_file_info.version of a loaded file). */
#define TSL_MODEL_FILE_FORMAT_VERSION 1

/* The library's version, "MAJOR.MINOR.PATCH" (a static string). */
const char *tsl_version_string(void);

/* The library's version numbers; any pointer may be NULL. */
void tsl_version_numbers(int *major, int *minor, int *patch);

/* The model-file format version the library writes and reads. */
int tsl_model_file_format_version(void);

#ifdef __cplusplus
}
#endif
#endif
