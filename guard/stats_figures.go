package guard

import "github.com/rxthrottle/rxthrottle"

// Figures returns the numbers of the snapshot, of Source "guard", for an
// exporter (rxthrottle.Figures).
func (s Stats) Figures() []rxthrottle.Figure {
	c, ud := rxthrottle.FigureCounter, rxthrottle.FigureUpDown
	return []rxthrottle.Figure{
		guardFigure("guard.checks", "{check}", c, "Checks made.", float64(s.Checks)),
		guardFigure("guard.allowed", "{check}", c, "Checks allowed.", float64(s.Allowed)),
		guardFigure("guard.refused", "{check}", c, "Checks refused.", float64(s.Refused)),
		guardFigure("guard.errors", "{check}", c, "Checks the store could not decide.", float64(s.Errors)),
		guardFigure("guard.blocks", "{block}", c, "Times a key was blocked.", float64(s.Blocks)),
		guardFigure("guard.full", "{check}", c, "Checks of new keys refused because the store held its maximum of live keys (counted in refused too).", float64(s.Full)),
		guardFigure("guard.keys_live", "{key}", ud, "Keys with a window or a block in force now.", float64(s.KeysLive)),
		guardFigure("guard.keys_blocked", "{key}", ud, "Keys blocked now.", float64(s.KeysBlocked)),
	}
}

func guardFigure(name, unit string, k rxthrottle.FigureKind, help string, v float64) rxthrottle.Figure {
	return rxthrottle.Figure{Source: "guard", Name: name, Help: help, Kind: k, Unit: unit, Value: v}
}
