package studies_test

import (
	"testing"

	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }
