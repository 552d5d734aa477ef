// OpenSSL's libcrypto from the system (Debian's libssl-dev): CMS EnvelopedData is opened with it.
#include <openssl/bio.h>
#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
