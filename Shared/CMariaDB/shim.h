// MariaDB Connector/C from the system (Debian's libmariadb-dev): moving a MyStudies 2.x
// deployment in reads its MySQL databases with it.
#include <mysql.h>
