// libqrencode (Debian's libqrencode-dev): QR Code symbols from text.
#include <qrencode.h>
