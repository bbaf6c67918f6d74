package box

// SectionHousehold is the settings section of the household of boxes,
// told when a box is added, accepted, declined or removed, a join request
// arrives, or the shared media change.
const SectionHousehold = "household"

// HouseholdChanged tells the change feed that the household changed; the
// household itself is syncd's (hhlink), not the core's.
func (b *Box) HouseholdChanged() { b.notify.section(SectionHousehold)() }
